/*
 * log.c - timestamped lines on stderr: formatted by the caller, written
 * by lib/logring.c's thread once log_start() has run, else at once
 * with one fwrite() each.
 */
#include "lib/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "lib/logring.h"

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
 * s appended at line + *n, cut to keep the text under room - 1 bytes,
 * where vsnprintf() into the rest of room cuts it too.
 */
static void
line_put(char *line, size_t room, size_t *n, const char *s)
{
    /* NULL as glibc's printf writes a NULL %s. */
    text_append(line, room, n, s != NULL ? s : "(null)");
}

/*
 * The line's head, "<time> <progname> <level>: ", without printf (the
 * review line is written a thousand times a second). Returns its length.
 */
static size_t
line_head(char *line, size_t room, const char *level)
{
    struct timespec ts;
    struct tm tm;
    long ms;
    size_t n;

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
    ms = ts.tv_nsec / 1000000;
    line[n++] = '.';
    line[n++] = (char)('0' + ms / 100);
    line[n++] = (char)('0' + ms / 10 % 10);
    line[n++] = (char)('0' + ms % 10);
    line[n++] = 'Z';
    line[n++] = ' ';
    line_put(line, room, &n, log_progname);
    line_put(line, room, &n, " ");
    line_put(line, room, &n, level);
    line_put(line, room, &n, ": ");
    return n;
}

/* n less the line breaks that end the message (which starts at start). */
static size_t
line_trim(const char *line, size_t n, size_t start)
{
    while (n > start && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    return n;
}

/*
 * Ends the line at n and queues it. Control characters in the message
 * (from start) become '?': names and uids in a review come from whoever
 * sent it, and must not be able to forge a second log line.
 */
static void
line_finish(char *line, size_t n, size_t start)
{
    for (size_t i = start; i < n; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c < 0x20 || c == 0x7f)
            line[i] = '?';
    }
    line[n++] = '\n';
    if (logring_push(line, n) < 0)
        fwrite(line, 1, n, stderr);
}

/* Formats one line into a stack buffer and writes it at once. */
static void
log_emit(const char *level, const char *errstr, const char *fmt, va_list ap)
{
    char line[LOG_LINE_MAX];
    const size_t room = sizeof(line) - 1; /* keeps a byte for '\n' */
    size_t n = line_head(line, room, level), start = n;
    int r;

    r = vsnprintf(line + n, room - n, fmt, ap);
    if (r > 0)
        n = (size_t)r < room - n ? n + (size_t)r : room - 1;
    n = line_trim(line, n, start);
    if (errstr != NULL && n < room - 1) {
        line_put(line, room, &n, ": ");
        line_put(line, room, &n, errstr);
    }
    line_finish(line, n, start);
}

void
log_info_pieces(const char *const *pieces, size_t count)
{
    char line[LOG_LINE_MAX];
    const size_t room = sizeof(line) - 1;
    size_t n = line_head(line, room, "info"), start = n;

    for (size_t i = 0; i < count; i++)
        line_put(line, room, &n, pieces[i]);
    line_finish(line, line_trim(line, n, start), start);
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
