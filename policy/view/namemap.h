/*
 * namemap.h - values by name, as the view index holds what it keeps of
 * each node's own objects (its NodeResourceTopology, its ResourceSlices):
 * a hash map, so that an update of one node, every few seconds each,
 * finds them without walking every node's. Names are copied in; the map
 * owns its values and frees them with the function it was made with.
 */
#ifndef TOPOGATE_NAMEMAP_H
#define TOPOGATE_NAMEMAP_H

#include <stddef.h>

struct namemap;

/* NULL out of memory. free_value (may be NULL) frees a value. */
struct namemap *namemap_new(void (*free_value)(void *value));
void namemap_free(struct namemap *m);

/* The value of name, or NULL. */
void *namemap_get(const struct namemap *m, const char *name);

/* name's value from now, the map's to free (the one it replaces is
 * freed); 0, or -1 out of memory (value not taken, the map as it was). */
int namemap_set(struct namemap *m, const char *name, void *value);

/* Removes name and frees its value: 1 when it was there, 0 when not. */
int namemap_del(struct namemap *m, const char *name);

size_t namemap_count(const struct namemap *m);

#endif
