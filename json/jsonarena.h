/*
 * jsonarena.h - inside json/ only: how the reader takes its pieces from
 * the arena the caller passes. The arena's life (jsonarena_new(),
 * jsonarena_reset(), jsonarena_free()) is in json/jsonread.h, the one
 * header callers outside json/ include.
 */
#ifndef TOPOGATE_JSONARENA_H
#define TOPOGATE_JSONARENA_H

#include <stddef.h>

struct jsonarena;

/*
 * n bytes of arena, aligned for any cJSON node, the arena's until its
 * next reset or its free (nothing frees one piece alone). NULL when out
 * of memory; the arena is then as it was.
 */
void *jsonarena_alloc(struct jsonarena *arena, size_t n);

#endif
