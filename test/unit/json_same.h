/*
 * json_same.h - two cJSON trees compared node by node, for the tests of
 * json/jsonread.c against cJSON's own parser (the unit test and the
 * fuzz target): types, names, strings, number bits, valueint, and the
 * links (each prev, and the first child's prev at the last child, which
 * cJSON's append relies on). jsonread empties every managedFields array;
 * empty_managed_fields() does the same to cJSON's tree first.
 */
#ifndef TOPOGATE_JSON_SAME_H
#define TOPOGATE_JSON_SAME_H

#include <string.h>

#include <cjson/cJSON.h>

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

#endif
