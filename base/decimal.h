/*
 * decimal.h - a whole number as decimal text, without printf.
 *
 * A review writes a few of them (GPU counts, container indexes in patch
 * paths); snprintf() costs several hundred instructions each and brings
 * libc's whole formatter into the review's working set.
 */
#ifndef TOPOGATE_DECIMAL_H
#define TOPOGATE_DECIMAL_H

#include <stddef.h>

/* Room decimal_write() needs: a long's 19 digits, a sign and the NUL. */
#define DECIMAL_MAX 21

/* n at out (DECIMAL_MAX bytes of room), NUL-terminated; returns its length. */
size_t decimal_write(char *out, long n);

#endif
