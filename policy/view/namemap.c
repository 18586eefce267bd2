/*
 * namemap.c - see namemap.h. Open addressing with linear probing; a
 * removal shifts the entries after it back (no tombstones), and the
 * table doubles at half full.
 */
#include "policy/view/namemap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char *name; /* NULL: a free slot */
    void *value;
};

struct namemap {
    struct entry *slots;
    size_t cap; /* a power of two */
    size_t n;
    void (*free_value)(void *value);
};

static size_t
hash(const char *s)
{
    uint64_t h = 14695981039346656037ULL;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)h;
}

struct namemap *
namemap_new(void (*free_value)(void *value))
{
    struct namemap *m = calloc(1, sizeof(*m));

    if (m == NULL || (m->slots = calloc(16, sizeof(*m->slots))) == NULL) {
        free(m);
        return NULL;
    }
    m->cap = 16;
    m->free_value = free_value;
    return m;
}

static void
drop(const struct namemap *m, struct entry *e)
{
    free(e->name);
    if (m->free_value)
        m->free_value(e->value);
    e->name = NULL;
}

void
namemap_free(struct namemap *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].name)
            drop(m, &m->slots[i]);
    free(m->slots);
    free(m);
}

/* The slot holding name, or the free one where it would go. */
static size_t
find(const struct namemap *m, const char *name)
{
    size_t i = hash(name) & (m->cap - 1);

    while (m->slots[i].name && strcmp(m->slots[i].name, name) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

void *
namemap_get(const struct namemap *m, const char *name)
{
    size_t i = find(m, name);

    return m->slots[i].name ? m->slots[i].value : NULL;
}

static int
grow(struct namemap *m)
{
    struct entry *old = m->slots;
    size_t cap = m->cap;

    if ((m->slots = calloc(cap * 2, sizeof(*m->slots))) == NULL) {
        m->slots = old;
        return -1;
    }
    m->cap = cap * 2;
    for (size_t i = 0; i < cap; i++)
        if (old[i].name)
            m->slots[find(m, old[i].name)] = old[i];
    free(old);
    return 0;
}

int
namemap_set(struct namemap *m, const char *name, void *value)
{
    size_t i = find(m, name);
    char *copy;

    if (m->slots[i].name) {
        if (m->free_value && m->slots[i].value != value)
            m->free_value(m->slots[i].value);
        m->slots[i].value = value;
        return 0;
    }
    if ((m->n + 1) * 2 > m->cap) {
        if (grow(m) < 0)
            return -1;
        i = find(m, name);
    }
    if ((copy = strdup(name)) == NULL)
        return -1;
    m->slots[i] = (struct entry){copy, value};
    m->n++;
    return 0;
}

int
namemap_del(struct namemap *m, const char *name)
{
    size_t i = find(m, name), j = i;

    if (m->slots[i].name == NULL)
        return 0;
    drop(m, &m->slots[i]);
    m->n--;
    /* Entries after it that probed past i move back into the gap. */
    for (;;) {
        j = (j + 1) & (m->cap - 1);
        if (m->slots[j].name == NULL)
            return 1;
        size_t home = hash(m->slots[j].name) & (m->cap - 1);
        /* j's home lies cyclically in (i, j]: it stays. */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        m->slots[i] = m->slots[j];
        m->slots[j].name = NULL;
        i = j;
    }
}

size_t
namemap_count(const struct namemap *m)
{
    return m->n;
}
