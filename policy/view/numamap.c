/*
 * numamap.c - see numamap.h. Open addressing with linear probing; a
 * removal shifts the entries after it back (no tombstones), and the
 * table doubles at half full.
 */
#include "policy/view/numamap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char *node; /* NULL: a free slot */
    struct node_numa numa;
};

struct numa_map {
    struct entry *slots;
    size_t cap; /* a power of two */
    size_t n;
};

static size_t
hash(const char *s)
{
    uint64_t h = 14695981039346656037ULL;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return (size_t)h;
}

struct numa_map *
numa_map_new(void)
{
    struct numa_map *m = calloc(1, sizeof(*m));

    if (m && (m->slots = calloc(16, sizeof(*m->slots))) == NULL) {
        free(m);
        return NULL;
    }
    if (m)
        m->cap = 16;
    return m;
}

void
numa_map_free(struct numa_map *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->cap; i++)
        free(m->slots[i].node);
    free(m->slots);
    free(m);
}

/* The slot holding node, or the free one where it would go. */
static size_t
find(const struct numa_map *m, const char *node)
{
    size_t i = hash(node) & (m->cap - 1);

    while (m->slots[i].node && strcmp(m->slots[i].node, node) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

const struct node_numa *
numa_map_get(const struct numa_map *m, const char *node)
{
    size_t i = find(m, node);

    return m->slots[i].node ? &m->slots[i].numa : NULL;
}

static int
grow(struct numa_map *m)
{
    struct numa_map bigger = {calloc(m->cap * 2, sizeof(struct entry)),
                              m->cap * 2, m->n};

    if (bigger.slots == NULL)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].node)
            bigger.slots[find(&bigger, m->slots[i].node)] = m->slots[i];
    free(m->slots);
    *m = bigger;
    return 0;
}

int
numa_map_put(struct numa_map *m, const char *node, const struct node_numa *n)
{
    size_t i = find(m, node);
    char *copy;

    if (m->slots[i].node) {
        if (viewnuma_equal(&m->slots[i].numa, n))
            return 0;
        m->slots[i].numa = *n;
        return 1;
    }
    if ((m->n + 1) * 2 > m->cap) {
        if (grow(m) < 0)
            return -1;
        i = find(m, node);
    }
    if ((copy = strdup(node)) == NULL)
        return -1;
    m->slots[i] = (struct entry){copy, *n};
    m->n++;
    return 1;
}

int
numa_map_del(struct numa_map *m, const char *node)
{
    size_t i = find(m, node), j = i;

    if (m->slots[i].node == NULL)
        return 0;
    free(m->slots[i].node);
    m->slots[i].node = NULL;
    m->n--;
    /* Entries after it that probed past i move back into the gap. */
    for (;;) {
        j = (j + 1) & (m->cap - 1);
        if (m->slots[j].node == NULL)
            return 1;
        size_t home = hash(m->slots[j].node) & (m->cap - 1);
        /* j's home lies cyclically in (i, j]: it stays. */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        m->slots[i] = m->slots[j];
        m->slots[j].node = NULL;
        i = j;
    }
}

size_t
numa_map_count(const struct numa_map *m)
{
    return m->n;
}
