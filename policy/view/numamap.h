/*
 * numamap.h - the nodes' Topology Manager facts by node name, as the view
 * index holds them: a hash map, so that a node's update (every few
 * seconds, each node) finds its NodeResourceTopology without walking
 * them all. Names are copied in; values are plain structs.
 */
#ifndef TOPOGATE_NUMAMAP_H
#define TOPOGATE_NUMAMAP_H

#include <stddef.h>

#include "policy/view/viewnuma.h"

struct numa_map;

struct numa_map *numa_map_new(void);
void numa_map_free(struct numa_map *m);

/* The facts of node, or NULL when the map has none. */
const struct node_numa *numa_map_get(const struct numa_map *m,
                                     const char *node);

/* Sets node's facts: 1 when they changed, 0 when the same, -1 out of
 * memory (the map unchanged). */
int numa_map_put(struct numa_map *m, const char *node,
                 const struct node_numa *n);

/* Removes node's facts: 1 when there were some, 0 when not. */
int numa_map_del(struct numa_map *m, const char *node);

size_t numa_map_count(const struct numa_map *m);

#endif
