/*
 * log.h - one line per event on stderr, in the shape of OpenBSD ntpd.
 *
 * Every line is "<RFC 3339 UTC time> <progname> <level>: <message>",
 * formatted by the caller. Before log_start() (and after log_stop()) it
 * is written at once with one fwrite(); in between, it is queued and a
 * writer thread writes the queue in batches (lib/logring.h), so a
 * request thread never waits on the file system. Either way threads
 * never interleave within a line, and lines come out in the order they
 * were logged. Nothing here allocates or owns anything; callable from
 * any thread once log_init() has run.
 */
#ifndef TOPOGATE_LOG_H
#define TOPOGATE_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sets the name shown on each line; the string is borrowed for good. */
void log_init(const char *progname);

/* log_debug() prints only when verbose is on. */
void log_setverbose(bool verbose);

/*
 * Starts the writer thread (with every signal blocked) and, the first
 * time, registers log_stop() with atexit(). 0, or -1 with errno set:
 * lines are then written at once, as before.
 */
int log_start(void);

/* Writes every queued line and stops the thread; a no-op if none runs. */
void log_stop(void);

/* Lines lost since start: the queue was full, or a write failed. */
uint64_t log_dropped(void);

void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Like log_warnx(), followed by ": " and strerror(errno). */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * An info line of count strings one after another, as log_info("%s%s...")
 * would write it: for the line of every review, which printf's formatter
 * would cost several thousand instructions and a few KB of code to warm.
 */
void log_info_pieces(const char *const *pieces, size_t count);

#endif
