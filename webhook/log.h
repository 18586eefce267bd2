/*
 * log.h - one line per event on stderr, in the shape of OpenBSD ntpd.
 *
 * Every line is "<RFC 3339 UTC time> <progname> <level>: <message>" and
 * is written with one fwrite(), so threads never interleave within a
 * line. Nothing here allocates or owns anything; callable from any
 * thread once log_init() has run.
 */
#ifndef TOPOGATE_LOG_H
#define TOPOGATE_LOG_H

#include <stdbool.h>

/* Sets the name shown on each line; the string is borrowed for good. */
void log_init(const char *progname);

/* log_debug() prints only when verbose is on. */
void log_setverbose(bool verbose);

void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Like log_warnx(), followed by ": " and strerror(errno). */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
