/*
 * logring.h - a bounded byte queue in front of a file descriptor, drained
 * by one writer thread.
 *
 * A caller copies a finished line in under a short lock and returns: no
 * system call, no wait on the file system. The writer thread writes what
 * has queued up in one writev() every LOGRING_BATCH_MS (sooner when the
 * queue is a quarter full), so lines come out whole and in the order they
 * were pushed. When the queue is full, a push waits for room while the
 * writer is making progress (a burst the thread has not caught up with
 * yet), at most LOGRING_WAIT_MS; once a wait ran out (the writer is stuck
 * in a write: a stalled disk, a pipe nobody reads), pushes drop their
 * line and count it, without waiting, until a write completes. There is
 * one queue per process; its memory is static and nothing here is owned
 * by a caller.
 */
#ifndef TOPOGATE_LOGRING_H
#define TOPOGATE_LOGRING_H

#include <stddef.h>
#include <stdint.h>

/* Bytes the queue holds: 256 KiB, about 1,000 review lines. */
#define LOGRING_SIZE (256 * 1024)
/*
 * How long a line may wait for the batch it goes out with. Each batch is
 * a wake-up and a writev() on a request thread's CPU: at 1,000 reviews/s
 * every 10 ms cost 5.3 us a review (4 % of it), every 50 ms 1.4 us.
 */
#define LOGRING_BATCH_MS 50
/* The longest a push waits for room before the writer counts as stuck. */
#define LOGRING_WAIT_MS 100
/* At most one drop report per this many seconds (and one at the stop). */
#define LOGRING_REPORT_S 10

/*
 * Starts the writer thread on fd. report, when not NULL, is called on
 * that thread, without any lock held, with the number of lines dropped
 * since the last report; it may push. 0, or -1 (errno set) when the
 * thread cannot start or the queue already runs.
 */
int logring_start(int fd, void (*report)(uint64_t dropped));

/*
 * Queues n bytes (a whole line, n <= LOGRING_SIZE). 0: queued; 1: no room
 * (see above), dropped and counted; -1: the queue does not run (before
 * start, after stop), and the caller writes the line itself.
 */
int logring_push(const char *p, size_t n);

/*
 * Writes every line queued so far, reports drops not yet reported, and
 * stops the thread. Later pushes return -1. A no-op when not running.
 */
void logring_stop(void);

/* Lines dropped since the process started: full queue or failed write. */
uint64_t logring_dropped(void);

#endif
