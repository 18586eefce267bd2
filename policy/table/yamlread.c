/* yamlread.c - see yamlread.h. */
#include "policy/table/yamlread.h"

#include <stdlib.h>
#include <string.h>

int
yamlread_kind(const struct ynode *n, enum ynode_kind kind, const char *what,
              struct load_error *err)
{
    static const char *const kinds[] = {"a scalar", "a list", "a map"};

    if (n->kind == kind)
        return 0;
    ynode_error(err, n, "%s must be %s", what, kinds[kind]);
    return -1;
}

int
yamlread_string(const struct ynode *n, const char *what, char **out,
                struct load_error *err)
{
    if (yamlread_kind(n, YNODE_SCALAR, what, err) < 0)
        return -1;
    if (n->scalar[0] == '\0') {
        ynode_error(err, n, "%s must not be empty", what);
        return -1;
    }
    free(*out);
    if ((*out = strdup(n->scalar)) == NULL) {
        ynode_error(err, n, "out of memory");
        return -1;
    }
    return 0;
}

/*
 * Every key of map must be one of the names in keys (NULL-terminated), and
 * appear once.
 */
int
yamlread_keys(const struct ynode *map, const char *const *keys,
              const char *what, struct load_error *err)
{
    for (size_t i = 0; i < map->n_items; i += 2) {
        const struct ynode *k = map->items[i];
        size_t j;

        if (yamlread_kind(k, YNODE_SCALAR, "a key", err) < 0)
            return -1;
        for (j = 0; keys[j] && strcmp(keys[j], k->scalar) != 0; j++)
            ;
        if (keys[j] == NULL) {
            ynode_error(err, k, "unknown key '%s' in %s", k->scalar, what);
            return -1;
        }
        for (size_t m = 0; m < i; m += 2) {
            if (strcmp(map->items[m]->scalar, k->scalar) == 0) {
                ynode_error(err, k, "duplicate key '%s' in %s", k->scalar,
                            what);
                return -1;
            }
        }
    }
    return 0;
}

/* Looks up a key that must be there. */
const struct ynode *
yamlread_need(const struct ynode *map, const char *key, const char *what,
              struct load_error *err)
{
    const struct ynode *v = ynode_get(map, key);

    if (v == NULL)
        ynode_error(err, map, "%s needs '%s'", what, key);
    return v;
}
