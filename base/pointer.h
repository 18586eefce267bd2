/*
 * pointer.h - JSON Pointer text for patch ops, written without printf.
 *
 * A mutated pod's patch names a dozen paths like /spec/containers/0/env:
 * snprintf() cost about as much as building the op itself.
 */
#ifndef TOPOGATE_POINTER_H
#define TOPOGATE_POINTER_H

#include <stddef.h>

/*
 * Item n of the array at pointer array, then rest (may be NULL): array
 * "/spec/containers", n 0, rest "/env" is "/spec/containers/0/env". Into
 * out of size bytes, cut to fit and always NUL-terminated, as snprintf()
 * would.
 */
void pointer_index(char *out, size_t size, const char *array, long n,
                   const char *rest);

/* prefix then suffix, cut to fit, NUL-terminated. */
void pointer_join(char *out, size_t size, const char *prefix,
                  const char *suffix);

#endif
