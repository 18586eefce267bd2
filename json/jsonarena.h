/*
 * jsonarena.h - the parsed review in one block per thread, dropped at once.
 *
 * Parsing a review with cJSON makes two or three heap allocations per
 * member (node, key, string value) and deleting the tree frees them one by
 * one: about half the CPU of a review went to malloc() and free(). Between
 * jsonarena_begin() and jsonarena_end(), cJSON allocations made by this
 * thread come from a per-thread block instead, and jsonarena_reset() drops
 * them all without a walk. Everywhere else (other threads, or this one
 * outside begin/end) cJSON allocates with malloc() as usual, so a tree or
 * text that cJSON makes there is freed the usual way.
 *
 * A tree built in the arena must not change after jsonarena_end(): a
 * node added to it then would come from malloc() and never be freed.
 */
#ifndef TOPOGATE_JSONARENA_H
#define TOPOGATE_JSONARENA_H

#include <stdbool.h>
#include <stddef.h>

/*
 * From now until jsonarena_end(), cJSON allocations on this thread come
 * from its arena. Returns 0, or -1 when no arena could be had (cJSON then
 * allocates with malloc() and the caller deletes its tree as usual).
 */
int jsonarena_begin(void);

/*
 * Back to malloc(). True when an allocation failed inside the arena (cJSON
 * then reports a parse error that is really out of memory).
 */
bool jsonarena_end(void);

/*
 * Forgets every allocation made in this thread's arena; the trees built
 * there must not be used any more. cJSON_Delete() on them is not needed
 * (and harmless before the reset).
 */
void jsonarena_reset(void);

/*
 * n bytes as cJSON's hooks allocate them on this thread now: from the
 * arena between begin and end, else malloc(). For a parser that builds
 * cJSON nodes itself (jsonread.c); NULL when out of memory.
 */
void *jsonarena_malloc(size_t n);

/*
 * p[0..n) counts as the arena's until the next reset: cJSON's free leaves
 * what points into it alone. For a text read in place, whose strings the
 * tree points into (jsonread_in_place()); the caller keeps it that long.
 * One range at a time: a second call replaces the first.
 */
void jsonarena_adopt(void *p, size_t n);

/* Whether this thread is between jsonarena_begin() and _end(). */
bool jsonarena_active(void);

#endif
