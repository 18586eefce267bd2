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

/*
 * What stands for U+0000 inside a C string read from JSON or YAML: a NUL
 * byte would end the string there, and 0xFF is the one byte that no
 * UTF-8 text holds, so nothing else reads as it. The apiserver stores
 * env values and annotations holding U+0000; with this byte in its place
 * C's string functions compare, search and parse the whole value as the
 * apiserver's Go code does ("true\u0000" is not "true", "8\u0000" no
 * count). jsonout.h writes it back as \u0000.
 */
#define UTF8_NUL_STANDIN 0xFF

#endif
