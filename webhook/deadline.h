/*
 * deadline.h - connection slots and the deadlines of what is sent on them.
 *
 * libmicrohttpd's connection timeout counts idle time only: a client that
 * sends one byte a second keeps a connection (and its memory) forever,
 * and one that never starts TLS keeps its slot for the whole timeout. A
 * watchdog thread here shuts down the socket of any connection whose
 * current window is older than its limit; libmicrohttpd then sees the end
 * of the stream and closes it as usual. The windows:
 *
 *   new      from accept until the TLS handshake is done, or from the
 *            first bytes of a head on a kept connection, until the
 *            head is in (plain HTTP: from accept until the first head is
 *            in): a short limit (first_ms)
 *   request  from the request line until the answer: the whole request
 *   kept     from the handshake, or from an answer, until the next bytes
 *            come: a client's pool of idle connections (kept_s;
 *            libmicrohttpd's idle timeout ends it first)
 *
 * When every slot is taken (capacity), or every slot one address may
 * hold (per_peer), a new connection takes the slot of the one silent
 * longest (of that address): first one that never sent a whole head,
 * else a kept one between requests. Silent: nothing for a moment (500
 * ms), not a byte of its handshake either, and no whole TLS record
 * unread. One in the middle of a request or of a moving handshake is
 * never taken. An
 * address at its cap with none silent goes over it rather than lose a
 * busy one (the apiserver is one address, with a connection per call in
 * flight); the watchdog takes it back to its cap as its connections go
 * silent, its kept ones past the cap go first when slots run short, and
 * with every slot taken and none silent its connections past the cap
 * that have sent nothing go, else those of the address holding the most
 * past its cap (for another address's new one, never its own). The
 * watchdog keeps a sixteenth of the slots free the same way. So a
 * client that floods idle or half-open connections cannot keep a review
 * out.
 *
 * struct deadline owns its thread and the records of open connections;
 * each record lives from deadline_open() to deadline_close().
 */
#ifndef TOPOGATE_DEADLINE_H
#define TOPOGATE_DEADLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct deadline;
struct deadline_conn;

/*
 * Starts the watchdog: seconds for a request, kept_s for a kept window,
 * first_ms for a new connection's handshake (and head, where no handshake
 * is reported), capacity slots (per_peer of them from one address) before
 * a new connection takes an old one's.
 * name (static) goes into the log lines. NULL when out of memory or out
 * of threads.
 */
struct deadline *deadline_new(const char *name, unsigned int seconds,
                              unsigned int kept_s, unsigned int first_ms,
                              unsigned int capacity, unsigned int per_peer);

/* Stops the watchdog; every connection must have been closed. */
void deadline_free(struct deadline *d);

/*
 * Before a connection from peer (NULL if unknown) is accepted: makes room
 * for it, or false when every slot it could take holds a request or a
 * connection only just opened (refuse it then: close it at once, before
 * libmicrohttpd gives it a slot of its own).
 */
bool deadline_admit(struct deadline *d, const struct sockaddr *peer);

/*
 * Watches socket fd, from peer, from now on, in its new window. NULL when
 * out of memory. fd must stay open until deadline_close() has returned:
 * the watchdog may shut it down until then, and must never reach a
 * number reused by another.
 */
struct deadline_conn *deadline_open(struct deadline *d, int fd,
                                    const struct sockaddr *peer);
void deadline_close(struct deadline *d, struct deadline_conn *c);

/*
 * Only the connection's own thread calls these. The TLS handshake is
 * done: a new connection is kept (idle) from now on, as one answered.
 */
void deadline_handshake_done(struct deadline_conn *c);
/*
 * Bytes came in. On a kept connection they begin a head, which has
 * first_ms from now, as a new connection's has.
 */
void deadline_bytes_in(struct deadline_conn *c);
/* The request line is in:
 * the review's clock starts (on a kept connection, a request window too).
 */
void deadline_request_line(struct deadline_conn *c);
/* The head is in: the request window runs from the request line. */
void deadline_request_head(struct deadline_conn *c);
/* The answer went: a kept window starts now. */
void deadline_answered(struct deadline_conn *c);

/* When the current request line came: CLOCK_MONOTONIC nanoseconds. */
uint64_t deadline_since(const struct deadline_conn *c);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t deadline_now(void);

#endif
