/*
 * log.c - timestamped lines on stderr: formatted by the caller, written
 * by webhook/logring.c's thread once log_start() has run, else at once
 * with one fwrite() each.
 */
#include "webhook/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "webhook/logring.h"

/* Long enough for a review line with every field at its maximum. */
#define LOG_LINE_MAX 2048

static const char *log_progname = "topogate";
static _Thread_local time_t log_stamp_sec = -1;
static _Thread_local char log_stamp[32];
static _Thread_local size_t log_stamp_len;
static atomic_bool log_verbose;

void
log_init(const char *progname)
{
    log_progname = progname;
}

void
log_setverbose(bool verbose)
{
    atomic_store(&log_verbose, verbose);
}

/*
 * Formats one line into a stack buffer and writes it at once. Control
 * characters become '?': names and uids in a review come from whoever
 * sent it, and must not be able to forge a second log line.
 */
static void
log_emit(const char *level, const char *errstr, const char *fmt, va_list ap)
{
    char line[LOG_LINE_MAX];
    const size_t room = sizeof(line) - 1; /* keeps a byte for '\n' */
    struct timespec ts;
    struct tm tm;
    size_t n, start;
    int r;

    clock_gettime(CLOCK_REALTIME, &ts);
    /* One review line per request: format the date once a second. */
    if (ts.tv_sec != log_stamp_sec) {
        gmtime_r(&ts.tv_sec, &tm);
        log_stamp_len =
            strftime(log_stamp, sizeof(log_stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        log_stamp_sec = ts.tv_sec;
    }
    memcpy(line, log_stamp, log_stamp_len);
    n = log_stamp_len;
    r = snprintf(line + n, room - n, ".%03ldZ %s %s: ", ts.tv_nsec / 1000000,
                 log_progname, level);
    n += (r > 0 && (size_t)r < room - n) ? (size_t)r : 0;
    start = n;

    r = vsnprintf(line + n, room - n, fmt, ap);
    if (r > 0)
        n = (size_t)r < room - n ? n + (size_t)r : room - 1;
    while (n > start && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    if (errstr != NULL && n < room - 1) {
        r = snprintf(line + n, room - n, ": %s", errstr);
        if (r > 0)
            n = (size_t)r < room - n ? n + (size_t)r : room - 1;
    }
    for (size_t i = start; i < n; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c < 0x20 || c == 0x7f)
            line[i] = '?';
    }
    line[n++] = '\n';
    if (logring_push(line, n) < 0)
        fwrite(line, 1, n, stderr);
}

/* On the writer thread, at most once per LOGRING_REPORT_S. */
static void
log_report_drops(uint64_t dropped)
{
    log_warnx("log: %llu lines dropped, the log could not keep up "
              "(topogate_log_dropped_lines_total)",
              (unsigned long long)dropped);
}

static void
log_atexit(void)
{
    atexit(log_stop);
}

int
log_start(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, log_atexit);
    return logring_start(STDERR_FILENO, log_report_drops);
}

void
log_stop(void)
{
    logring_stop();
}

uint64_t
log_dropped(void)
{
    return logring_dropped();
}

void
log_info(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_emit("info", NULL, fmt, ap);
    va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
    char buf[128];
    const char *errstr;
    va_list ap;

    /* Before anything else here can change errno. */
    errstr = strerror_r(errno, buf, sizeof(buf));
    va_start(ap, fmt);
    log_emit("warn", errstr, fmt, ap);
    va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_emit("warn", NULL, fmt, ap);
    va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
    va_list ap;

    if (!atomic_load_explicit(&log_verbose, memory_order_relaxed))
        return;
    va_start(ap, fmt);
    log_emit("debug", NULL, fmt, ap);
    va_end(ap);
}
