/*
 * logring.c - a byte ring under one mutex, drained by a writer thread.
 *
 * A push is two memcpy() under the lock and, rarely, a condition signal;
 * it never waits for room. The writer takes up to LOGRING_HIGH bytes from
 * head, writes them with the lock released (pushers only ever write past
 * head + len, so nobody touches those bytes), gives that space back, and
 * takes the next piece while any is queued. It waits between batches so
 * that one writev() carries many lines, and it runs as SCHED_BATCH: its
 * wake-up never preempts a request thread on the same CPU, and it still
 * gets a fair share of a busy CPU.
 *
 * Until issue 49 a push into a full ring waited up to 100 ms for room,
 * and the writer gave the room back only once its whole batch was
 * written: with the log in a file, a write held up by the page cache or
 * the disk (or a writer short of CPU) could hold up every review whose
 * line came next. A line lost is counted
 * (topogate_log_dropped_lines_total) and reported; a review kept
 * waiting is not.
 */
#include "lib/logring.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Wake the writer before the batch is due once this much has queued. */
#define LOGRING_HIGH (LOGRING_SIZE / 4)
/* Empty batches in a row (a second of them) before the writer sleeps
 * until a push. */
#define LOGRING_QUIET_ROUNDS (1000 / LOGRING_BATCH_MS)

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* the writer waits here */
    pthread_t thread;
    bool started;     /* a thread was created and not yet joined */
    bool running;     /* pushes are queued; false once the thread drained */
    bool stopping;    /* drain, report, then end */
    bool idle;        /* the writer waits for a push, with no timeout */
    size_t head, len;
    uint64_t reported_at_start; /* ring_dropped when the thread was made */
    int fd;
    void (*report)(uint64_t dropped);
} ring = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
};
static char ring_buf[LOGRING_SIZE];
static atomic_uint_least64_t ring_dropped;

static size_t
count_lines(const char *p, size_t n)
{
    size_t lines = 0;

    for (size_t i = 0; i < n; i++)
        lines += p[i] == '\n';
    return lines;
}

/*
 * Writes n bytes from start, which may wrap. On an error other than
 * EINTR or EAGAIN the rest is lost: its lines count as dropped.
 */
static void
ring_write(size_t start, size_t n)
{
    struct iovec iov[2];
    int cnt = 1;

    iov[0].iov_base = ring_buf + start;
    iov[0].iov_len = n < LOGRING_SIZE - start ? n : LOGRING_SIZE - start;
    iov[1].iov_base = ring_buf;
    iov[1].iov_len = n - iov[0].iov_len;
    if (iov[1].iov_len > 0)
        cnt = 2;
    while (cnt > 0) {
        ssize_t w = writev(ring.fd, iov, cnt);

        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pfd = {.fd = ring.fd, .events = POLLOUT};
            (void)poll(&pfd, 1, 1000);
            continue;
        }
        if (w <= 0) {
            size_t lost = 0;
            for (int i = 0; i < cnt; i++)
                lost += count_lines(iov[i].iov_base, iov[i].iov_len);
            atomic_fetch_add(&ring_dropped, lost);
            return;
        }
        while (cnt > 0 && (size_t)w >= iov[0].iov_len) {
            w -= (ssize_t)iov[0].iov_len;
            iov[0] = iov[1];
            cnt--;
        }
        if (cnt > 0) {
            iov[0].iov_base = (char *)iov[0].iov_base + w;
            iov[0].iov_len -= (size_t)w;
        }
    }
}

static void
deadline_in(struct timespec *ts, long ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_nsec += ms * 1000000L;
    ts->tv_sec += ts->tv_nsec / 1000000000L;
    ts->tv_nsec %= 1000000000L;
}

static void *
ring_main(void *arg)
{
    struct sched_param sp = {.sched_priority = 0};
    struct timespec until, now;
    time_t last_report = 0;
    /* A writer started again reports only the drops since its start:
     * taken before the thread was made, which may run late. */
    uint64_t reported = ring.reported_at_start;
    unsigned quiet = 0;

    (void)arg;
    /* Best effort: without it the writer is an ordinary thread. */
    (void)pthread_setschedparam(pthread_self(), SCHED_BATCH, &sp);
    pthread_setname_np(pthread_self(), "topogate-log");
    pthread_mutex_lock(&ring.lock);
    for (;;) {
        /* A batch: LOGRING_BATCH_MS, or a quarter of the ring, or stop. */
        deadline_in(&until, LOGRING_BATCH_MS);
        while (!ring.stopping && ring.len < LOGRING_HIGH) {
            if (ring.len == 0 && quiet >= LOGRING_QUIET_ROUNDS) {
                ring.idle = true;
                pthread_cond_wait(&ring.wake, &ring.lock);
                ring.idle = false;
                quiet = 0;
                deadline_in(&until, LOGRING_BATCH_MS);
                continue;
            }
            if (pthread_cond_clockwait(&ring.wake, &ring.lock, CLOCK_MONOTONIC,
                                       &until) == ETIMEDOUT)
                break;
        }
        quiet = ring.len == 0 ? quiet + 1 : 0;
        /* A piece at a time, each given back once written: a slow write
         * holds up at most a quarter of the ring. */
        while (ring.len > 0) {
            size_t start = ring.head;
            size_t n = ring.len < LOGRING_HIGH ? ring.len : LOGRING_HIGH;

            pthread_mutex_unlock(&ring.lock);
            ring_write(start, n);
            pthread_mutex_lock(&ring.lock);
            ring.head = (start + n) % LOGRING_SIZE;
            ring.len -= n;
        }
        uint64_t d = atomic_load(&ring_dropped);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (d != reported && ring.report != NULL &&
            (ring.stopping || last_report == 0 ||
             now.tv_sec - last_report >= LOGRING_REPORT_S)) {
            uint64_t n = d - reported;

            reported = d;
            last_report = now.tv_sec;
            pthread_mutex_unlock(&ring.lock);
            ring.report(n);
            pthread_mutex_lock(&ring.lock);
            continue; /* the report is queued: write it too */
        }
        if (ring.stopping && ring.len == 0)
            break;
    }
    /* Under the lock with nothing queued: later pushes write themselves,
     * after every line queued before them. */
    ring.running = false;
    pthread_mutex_unlock(&ring.lock);
    return NULL;
}

int
logring_start(int fd, void (*report)(uint64_t dropped))
{
    sigset_t all, old;
    int rc;

    pthread_mutex_lock(&ring.lock);
    if (ring.started || ring.running) {
        pthread_mutex_unlock(&ring.lock);
        errno = EBUSY;
        return -1;
    }
    ring.head = ring.len = 0;
    ring.stopping = ring.idle = false;
    ring.fd = fd;
    ring.report = report;
    ring.reported_at_start = atomic_load(&ring_dropped);
    ring.running = true;
    /* No signal is ever delivered to the writer: sigwait() elsewhere. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    rc = pthread_create(&ring.thread, NULL, ring_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        ring.running = false;
        pthread_mutex_unlock(&ring.lock);
        errno = rc;
        return -1;
    }
    ring.started = true;
    pthread_mutex_unlock(&ring.lock);
    return 0;
}

int
logring_push(const char *p, size_t n)
{
    size_t tail, first, before, room;
    bool wake;

    pthread_mutex_lock(&ring.lock);
    if (!ring.running) {
        pthread_mutex_unlock(&ring.lock);
        return -1;
    }
    room = LOGRING_SIZE - ring.len;
    if (!pthread_equal(ring.thread, pthread_self()))
        room = room > LOGRING_REPORT_ROOM ? room - LOGRING_REPORT_ROOM : 0;
    /* No room: drop and count, never wait (see the top of this file). */
    if (n > room) {
        pthread_mutex_unlock(&ring.lock);
        atomic_fetch_add(&ring_dropped, 1);
        return 1;
    }
    tail = (ring.head + ring.len) % LOGRING_SIZE;
    first = n < LOGRING_SIZE - tail ? n : LOGRING_SIZE - tail;
    memcpy(ring_buf + tail, p, first);
    memcpy(ring_buf, p + first, n - first);
    before = ring.len;
    ring.len += n;
    wake = (ring.idle && before == 0) ||
           (before < LOGRING_HIGH && ring.len >= LOGRING_HIGH);
    pthread_mutex_unlock(&ring.lock);
    if (wake)
        pthread_cond_signal(&ring.wake);
    return 0;
}

void
logring_stop(void)
{
    pthread_t t;

    pthread_mutex_lock(&ring.lock);
    if (!ring.started || pthread_equal(ring.thread, pthread_self())) {
        pthread_mutex_unlock(&ring.lock);
        return;
    }
    ring.started = false;
    ring.stopping = true;
    t = ring.thread;
    pthread_mutex_unlock(&ring.lock);
    pthread_cond_signal(&ring.wake);
    pthread_join(t, NULL);
}

uint64_t
logring_dropped(void)
{
    return atomic_load_explicit(&ring_dropped, memory_order_relaxed);
}
