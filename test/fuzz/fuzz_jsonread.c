/*
 * fuzz_jsonread.c - libFuzzer target: any bytes through jsonread(), the
 * review's parser, against cJSON's own parser.
 *
 * Beyond "no crash, no leak, no undefined behaviour": whatever jsonread
 * takes, cJSON takes too and builds the same tree (types, names, strings,
 * number bits, links), every managedFields array emptied; whatever it
 * refuses comes with a reason. jsonread is stricter than cJSON (RFC 8259
 * numbers, UTF-8, no bytes after the value), so the other direction is
 * test/unit/jsonread_oracle.py's, against Python's json.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "webhook/jsonread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
empty_managed_fields(cJSON *node)
{
    for (cJSON *c = node->child; c != NULL; c = c->next) {
        if (c->string != NULL && strcmp(c->string, "managedFields") == 0 &&
            cJSON_IsArray(c)) {
            cJSON_Delete(c->child);
            c->child = NULL;
        } else {
            empty_managed_fields(c);
        }
    }
}

static int
same_tree(const cJSON *a, const cJSON *b)
{
    const cJSON *x, *y, *last = NULL;

    if (a->type != b->type || a->valueint != b->valueint ||
        memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) != 0 ||
        (a->string == NULL) != (b->string == NULL) ||
        (a->string && strcmp(a->string, b->string) != 0) ||
        (a->valuestring == NULL) != (b->valuestring == NULL) ||
        (a->valuestring && strcmp(a->valuestring, b->valuestring) != 0))
        return 0;
    for (x = a->child, y = b->child; x && y; x = x->next, y = y->next) {
        if ((x != a->child && x->prev != last) || !same_tree(x, y))
            return 0;
        last = x;
    }
    return x == NULL && y == NULL &&
           (a->child == NULL || a->child->prev == last);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy: a read past the end is a heap overflow. */
    char *text = malloc(size > 0 ? size : 1), msg[256];
    cJSON *mine = NULL, *theirs;

    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    switch (jsonread(text, size, &mine, msg, sizeof(msg))) {
    case JSONREAD_OK:
        theirs = cJSON_ParseWithLength(text, size);
        if (theirs == NULL)
            abort();
        empty_managed_fields(theirs);
        if (!same_tree(mine, theirs))
            abort();
        cJSON_Delete(theirs);
        cJSON_Delete(mine);
        break;
    case JSONREAD_MALFORMED:
        if (mine != NULL || msg[0] == '\0')
            abort();
        break;
    default:
        abort(); /* out of memory cannot happen at these sizes */
    }
    free(text);
    return 0;
}
