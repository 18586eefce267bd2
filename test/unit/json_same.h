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

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/utf8.h"

/*
 * cJSON's parse of text[0..len) (NULL where it refuses), each \u0000
 * escape first replaced by the byte jsonread decodes it to
 * (UTF8_NUL_STANDIN): cJSON would cut the string at a NUL. For texts
 * jsonread took, whose backslashes are all in strings.
 */
static cJSON *
cjson_parse_standin(const char *text, size_t len)
{
    char *copy = malloc(len + 1);
    size_t n = 0;
    cJSON *tree;

    if (copy == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\\' && len - i >= 6 &&
            memcmp(text + i, "\\u0000", 6) == 0) {
            copy[n++] = (char)UTF8_NUL_STANDIN;
            i += 5;
            continue;
        }
        if (text[i] == '\\' && i + 1 < len)
            copy[n++] = text[i++]; /* and the byte it escapes, below */
        copy[n++] = text[i];
    }
    tree = cJSON_ParseWithLength(copy, n);
    free(copy);
    return tree;
}

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
