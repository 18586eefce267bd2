/*
 * deadline.h - drops a connection whose request does not arrive in time.
 *
 * libmicrohttpd's connection timeout counts idle time only: a client that
 * sends one byte a second keeps a connection (and its memory) forever. A
 * watchdog thread here shuts down the socket of any connection whose
 * current window (from accept, from a request line, or from the last
 * answer) is older than the limit; libmicrohttpd then sees the end of the
 * stream and closes it as usual.
 *
 * struct deadline owns its thread and the records of open connections;
 * each record lives from deadline_open() to deadline_close().
 */
#ifndef TOPOGATE_DEADLINE_H
#define TOPOGATE_DEADLINE_H

#include <stdint.h>

struct deadline;
struct deadline_conn;

/* Starts the watchdog. NULL when out of memory or out of threads. */
struct deadline *deadline_new(unsigned int seconds);

/* Stops the watchdog; every connection must have been closed. */
void deadline_free(struct deadline *d);

/*
 * Watches socket fd from now on. NULL when out of memory. fd must stay
 * open until deadline_close() has returned: the watchdog may shut it
 * down until then, and must never reach a number reused by another.
 */
struct deadline_conn *deadline_open(struct deadline *d, int fd);
void deadline_close(struct deadline *d, struct deadline_conn *c);

/* Starts a new window now. Only the connection's own thread calls it. */
void deadline_restart(struct deadline_conn *c);

/* When the current window started: CLOCK_MONOTONIC nanoseconds. */
uint64_t deadline_since(const struct deadline_conn *c);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t deadline_now(void);

#endif
