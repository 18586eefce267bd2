/*
 * file.h - reading a whole small file (a policy, a certificate, a key)
 * for a reload, without going through cmd/.
 */
#ifndef TOPOGATE_FILE_H
#define TOPOGATE_FILE_H

#include <stddef.h>

/*
 * The largest file read: a policy or a PEM bundle is kilobytes, so a
 * path that points at something bigger is a mistake, not a file to load.
 */
#define FILE_MAX (16 * 1024 * 1024)

/*
 * The whole file, NUL-terminated, owned by the caller, its length in
 * *len. NULL with errno set (EFBIG past FILE_MAX, EISDIR, ENOENT...).
 */
char *file_read(const char *path, size_t *len);

/* Zeroes and frees a buffer that held a secret; NULL is a no-op. */
void file_free_secret(char *buf, size_t len);

#endif
