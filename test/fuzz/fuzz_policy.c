/*
 * fuzz_policy.c - libFuzzer target: policy YAML through snapshot_parse().
 *
 * A file the loader accepts must also survive what `topogate tables -o
 * yaml` promises: print -> parse -> print gives the same text. A file it
 * refuses must say where, with a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/table/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_round_trip(const struct snapshot *s)
{
    struct load_error err;
    struct snapshot *again;
    char *first = snapshot_print(s), *second;

    if (first == NULL)
        abort();
    again = snapshot_parse(first, strlen(first), s->origin, NULL, &err);
    if (again == NULL)
        abort(); /* the printer wrote something the loader refuses */
    second = snapshot_print(again);
    if (second == NULL || strcmp(first, second) != 0)
        abort(); /* print -> parse -> print is not stable */
    free(second);
    snapshot_unref(again);
    free(first);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct load_error err;
    struct snapshot *s;
    char *bytes = malloc(size > 0 ? size : 1); /* no NUL: see fuzz_review.c */

    if (bytes == NULL)
        return 0;
    memcpy(bytes, data, size);
    memset(&err, 0, sizeof(err));
    s = snapshot_parse(bytes, size, "fuzz.yaml", NULL, &err);
    if (s != NULL)
        check_round_trip(s);
    else if (err.message[0] == '\0' ||
             memchr(err.message, '\0', sizeof(err.message)) == NULL)
        abort(); /* a refusal must say why */
    snapshot_unref(s);
    free(bytes);
    return 0;
}
