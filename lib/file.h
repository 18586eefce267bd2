/*
 * file.h - reading a whole file or stream into memory: the policy, the
 * certificates and keys `serve` (re)loads, and the manifests and reviews
 * the CLI reads.
 */
#ifndef TOPOGATE_FILE_H
#define TOPOGATE_FILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * The largest policy or PEM file `serve` reads: they are kilobytes, so a
 * path that points at something bigger is a mistake, not a file to load.
 */
#define FILE_MAX (16 * 1024 * 1024)

/*
 * The whole stream, NUL-terminated, owned by the caller, its length in
 * *len. NULL with errno set (EFBIG past about max bytes, EISDIR...).
 * SIZE_MAX: no limit.
 */
char *file_read_stream(FILE *f, size_t max, size_t *len);

/* The same for a file by name (ENOENT and the like from fopen). */
char *file_read(const char *path, size_t max, size_t *len);

/* Zeroes and frees a buffer that held a secret; NULL is a no-op. */
void file_free_secret(char *buf, size_t len);

#endif
