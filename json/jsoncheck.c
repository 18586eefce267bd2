/* jsoncheck.c - see jsoncheck.h. */
#include "json/jsoncheck.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Objects up to this many members are checked pair by pair. */
#define PAIRWISE_MAX 16

static int
compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int
duplicate(char *msg, size_t size, const char *name)
{
    snprintf(msg, size,
             "member '%s' twice in one object: the apiserver never sends "
             "that, and which one counts is not agreed",
             name);
    return -1;
}

/*
 * Whether a member's name repeats an earlier one's, comparing only the
 * members whose first bytes do (a pod's spec has a dozen such pairs).
 */
static bool
repeats_a_name(const cJSON *object)
{
    uint64_t seen = 0;

    for (const cJSON *a = object->child; a != NULL; a = a->next) {
        uint64_t bit = (uint64_t)1 << ((unsigned char)a->string[0] & 63);

        if (seen & bit)
            for (const cJSON *b = object->child; b != a; b = b->next)
                if (b->string[0] == a->string[0] &&
                    strcmp(b->string, a->string) == 0)
                    return true;
        seen |= bit;
    }
    return false;
}

int
jsoncheck_unique_members(const cJSON *object, size_t n, char *msg,
                         size_t size)
{
    const char **names;
    size_t k = 0;
    int rc = 0;

    if (n <= PAIRWISE_MAX) {
        if (!repeats_a_name(object))
            return 0;
        /* A twin: named as it always was, the first member that has one. */
        for (const cJSON *a = object->child; a != NULL; a = a->next)
            for (const cJSON *b = a->next; b != NULL; b = b->next)
                if (a->string[0] == b->string[0] &&
                    strcmp(a->string, b->string) == 0)
                    return duplicate(msg, size, a->string);
        return 0;
    }
    /* Sorted, a twin sits next to its first. */
    if ((names = malloc(n * sizeof(*names))) == NULL)
        return snprintf(msg, size, "out of memory"), -1;
    for (const cJSON *m = object->child; m != NULL; m = m->next)
        names[k++] = m->string;
    qsort(names, k, sizeof(*names), compare_names);
    for (size_t i = 1; i < k; i++)
        if (strcmp(names[i - 1], names[i]) == 0) {
            rc = duplicate(msg, size, names[i]);
            break;
        }
    free(names);
    return rc;
}
