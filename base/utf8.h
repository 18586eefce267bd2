/*
 * utf8.h - whether bytes are UTF-8: the review's reader refuses what is
 * not, and the JSON writer (jsonout.h) mends a string cut mid-character.
 */
#ifndef TOPOGATE_UTF8_H
#define TOPOGATE_UTF8_H

#include <stddef.h>

/*
 * The length of the UTF-8 sequence at s (1 to 4; at most avail bytes are
 * read), or 0 when it is not one (RFC 3629).
 */
size_t utf8_length(const unsigned char *s, size_t avail);

#endif
