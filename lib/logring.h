/*
 * logring.h - a bounded byte queue in front of a file descriptor, drained
 * by one writer thread.
 *
 * A caller copies a finished line in under a short lock and returns: no
 * system call, no wait on the file system, never a wait for the writer.
 * The writer thread writes what has queued up every LOGRING_BATCH_MS
 * (sooner when the queue is a quarter full), a quarter of the queue at
 * most per writev(), each quarter given back as soon as it is written,
 * so lines come out whole and in the order they were pushed. When the
 * queue has no room for a line (the writer is behind: a write stalled on
 * the disk or the page cache, a pipe nobody reads, no CPU for it), the
 * line is dropped and counted, at once. There is one queue per process;
 * its memory is static and nothing here is owned by a caller.
 */
#ifndef TOPOGATE_LOGRING_H
#define TOPOGATE_LOGRING_H

#include <stddef.h>
#include <stdint.h>

/*
 * Bytes the queue holds: 512 KiB, about 2,700 review lines of 190
 * bytes, 270 ms of them at 10,000 reviews/s: how long the writer may be
 * held up before a line is dropped.
 */
#define LOGRING_SIZE (512 * 1024)
/*
 * Of those, what only the writer's own drop report may use, so that the
 * report of lines lost is never lost itself.
 */
#define LOGRING_REPORT_ROOM 256
/*
 * How long a line may wait for the batch it goes out with. Each batch is
 * a wake-up and a writev() on a request thread's CPU: at 1,000 reviews/s
 * every 10 ms cost 5.3 us a review (4 % of it), every 50 ms 1.4 us.
 */
#define LOGRING_BATCH_MS 50
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
 * Queues n bytes (a whole line, n <= LOGRING_SIZE) without waiting. 0:
 * queued; 1: no room (see above), dropped and counted; -1: the queue
 * does not run (before start, after stop), and the caller writes the
 * line itself.
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
