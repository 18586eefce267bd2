/*
 * The log queue (lib/log.c, lib/logring.c): with the writer
 * thread running, lines logged by many threads at once come out each
 * exactly once, whole, and each thread's in its order; log_stop() writes
 * everything still queued; a queue that cannot drain (its pipe is not
 * read) drops lines without waiting, counts every one, and says so; with
 * the writer blocked, the queue's bounds hold to the line.
 * stderr is redirected to a file or a pipe for each part; the checks
 * print on the original stderr.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/unit/check.h"
#include "lib/log.h"
#include "lib/logring.h"

#define THREADS 8
#define LINES 5000
#define FLOOD 40000

static int saved_stderr = -1;

static void
redirect(int fd)
{
    fflush(stderr);
    if (saved_stderr < 0)
        saved_stderr = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
}

static void
restore(void)
{
    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
}

static void *
logger(void *arg)
{
    int t = (int)(intptr_t)arg;

    for (int i = 0; i < LINES; i++)
        log_info("review uid=t%d-%d ns=team pod=worker-%d decision=allow", t, i,
                 i);
    return NULL;
}

/* Reads fd to its end into a string the caller frees. */
static char *
slurp(int fd)
{
    size_t cap = 1 << 20, len = 0;
    char *p = malloc(cap);
    ssize_t r;

    while (p != NULL && (r = read(fd, p + len, cap - len - 1)) > 0) {
        len += (size_t)r;
        if (cap - len < 4096) {
            char *q = realloc(p, cap *= 2);
            if (q == NULL)
                free(p);
            p = q;
        }
    }
    if (p != NULL)
        p[len] = '\0';
    return p;
}

/*
 * Checks every line of text: the shape, a thread's lines in order, each
 * at most once (a line the ring dropped leaves a gap). Returns the review
 * lines seen; *others gets the rest.
 */
static long
check_lines(char *text, int threads, int per_thread, long *others)
{
    int next[THREADS] = {0};
    long seen = 0, bad = 0;
    char *save = NULL;

    *others = 0;
    for (char *l = strtok_r(text, "\n", &save); l != NULL;
         l = strtok_r(NULL, "\n", &save)) {
        const char *r = strstr(l, " test info: review uid=t");
        int t, i;

        if (r == NULL || strlen(l) < 24 || l[10] != 'T' || l[23] != 'Z') {
            (*others)++;
            continue;
        }
        if (sscanf(r, " test info: review uid=t%d-%d ", &t, &i) != 2 || t < 0 ||
            t >= threads || i < next[t]) {
            if (bad++ < 5)
                fprintf(stderr, "out of order or torn: '%s'\n", l);
            continue;
        }
        next[t] = i + 1;
        seen++;
    }
    CHECK_INT(bad, 0);
    for (int t = 0; t < threads; t++)
        CHECK(next[t] <= per_thread);
    return seen;
}

/* The message part of each line of text (after "<time> test info: "). */
static int
messages(char *text, char **out, int max)
{
    int n = 0;
    char *save = NULL;

    for (char *l = strtok_r(text, "\n", &save); l != NULL && n < max;
         l = strtok_r(NULL, "\n", &save)) {
        const char *m = strstr(l, " test info: ");

        /* 2026-11-27T10:15:41.094Z: the time's shape, printf or not. */
        CHECK(strlen(l) > 24 && l[4] == '-' && l[10] == 'T' && l[19] == '.' &&
              l[23] == 'Z' && l[24] == ' ');
        out[n++] = m != NULL ? strdup(m) : strdup("(no head)");
    }
    return n;
}

/*
 * log_info_pieces() writes what log_info("%s%s...") writes for the same
 * strings: short and long lines (cut at the same byte), control
 * characters, line breaks at the end. Lines are written at once here (no
 * writer thread), into a file.
 */
static void
test_pieces(void)
{
    static char longer[5000];
    const char *cases[][3] = {
        {"review uid=", "abc", " ops=3"},
        {"tab\there", "", "bell\a del\x7f"},
        {"ends with breaks", "\r\n", "\n"},
        {"", "", ""},
        {longer, "tail", "more"},
        {longer + 3000, "", "x"},
        {longer + 2990, "0123456789", "y"},
    };
    enum { N = sizeof(cases) / sizeof(cases[0]) };
    char path[] = "/tmp/test_log_XXXXXX", *text, *got[2 * N + 2];
    int fd = mkstemp(path), n;

    memset(longer, 'L', sizeof(longer) - 1);
    CHECK(fd >= 0);
    redirect(fd);
    for (int i = 0; i < N; i++) {
        log_info("%s%s%s", cases[i][0], cases[i][1], cases[i][2]);
        log_info_pieces(cases[i], 3);
    }
    {
        const char *with_null[] = {"a=", NULL, " b"};

        log_info("a=%s b", "(null)");
        log_info_pieces(with_null, 3);
    }
    restore();
    lseek(fd, 0, SEEK_SET);
    text = slurp(fd);
    close(fd);
    unlink(path);
    CHECK(text != NULL);
    if (text == NULL)
        return;
    n = messages(text, got, 2 * N + 2);
    CHECK_INT(n, 2 * N + 2);
    for (int i = 0; i + 1 < n; i += 2) {
        CHECK_STR(got[i + 1], got[i]);
        free(got[i]);
        free(got[i + 1]);
    }
    free(text);
}

/* Many threads at once, then log_stop(): every line, once, in order. */
static void
test_concurrent(void)
{
    char path[] = "/tmp/test_webhook_log.XXXXXX";
    int fd = mkstemp(path);
    pthread_t th[THREADS];
    uint64_t before = log_dropped();
    long others, seen;
    char *text;

    CHECK(fd >= 0);
    if (fd < 0)
        return;
    unlink(path);
    redirect(fd);
    CHECK_INT(log_start(), 0);
    CHECK_INT(log_start(), -1); /* one writer per process */
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, logger, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    log_stop();
    /* After the stop a line is written at once, after the queued ones. */
    log_warnx("after the stop");
    restore();

    lseek(fd, 0, SEEK_SET);
    text = slurp(fd);
    close(fd);
    CHECK(text != NULL);
    if (text == NULL)
        return;
    CHECK(strstr(text, "after the stop\n") != NULL &&
          strstr(strstr(text, "after the stop\n"), "review") == NULL);
    seen = check_lines(text, THREADS, LINES, &others);
    /* Every line is written or counted as dropped: a writer that gets no
     * CPU for LOGRING_WAIT_MS on a busy machine drops, by design. */
    CHECK_INT(seen + (long)(log_dropped() - before), THREADS * LINES);
    CHECK(seen > 0);
    /* The stop line, and drop reports only where lines were dropped. */
    CHECK(others >= 1 && (others == 1) == (log_dropped() == before));
    free(text);
}

struct drain {
    int fd;
    char *text;
};

static void *
drainer(void *arg)
{
    struct drain *d = arg;

    d->text = slurp(d->fd);
    return NULL;
}

/*
 * The writer blocks on a pipe nobody reads (a disk that stalls): the
 * ring fills and pushes are dropped and counted, without waiting. Once
 * the pipe is read, log_stop() writes the rest and one report line.
 */
static void
test_full(void)
{
    struct drain d = {0};
    pthread_t th;
    uint64_t before = log_dropped(), dropped;
    long others, seen, reports = 0;
    int pfd[2];

    CHECK_INT(pipe(pfd), 0);
    redirect(pfd[1]);
    CHECK_INT(log_start(), 0); /* again, after a stop */
    for (int i = 0; i < FLOOD; i++)
        log_info("review uid=t0-%d ns=team pod=worker-%d decision=allow "
                 "padding=................................................",
                 i, i);
    dropped = log_dropped() - before;
    /* 40,000 lines of ~170 bytes do not fit in a 64 KiB pipe plus the
     * ring; every one that did not is counted. */
    CHECK(dropped > 0);
    CHECK(dropped < FLOOD);
    d.fd = pfd[0];
    pthread_create(&th, NULL, drainer, &d);
    log_stop();
    restore();
    close(pfd[1]);
    pthread_join(th, NULL);
    close(pfd[0]);
    CHECK(d.text != NULL);
    if (d.text == NULL)
        return;
    /* Every drop is reported: at once for the first ones (the writer may
     * report while the flood goes on), the rest at the stop. */
    {
        const char *head = "test warn: log: ";
        unsigned long long sum = 0, n;

        for (const char *p = strstr(d.text, head); p != NULL;
             p = strstr(p + 1, head)) {
            char tail[64];

            if (sscanf(p + strlen(head), "%llu lines %63[a-z ,]", &n, tail) ==
                    2 &&
                strcmp(tail, "dropped, the log could not keep up ") == 0) {
                sum += n;
                reports++;
            }
        }
        CHECK(reports >= 1);
        CHECK_INT(sum, dropped);
    }
    /* Dropped lines leave gaps; check_lines wants consecutive numbers. */
    seen = 0;
    others = 0;
    {
        long last = -1, bad = 0;
        char *save = NULL;

        for (char *l = strtok_r(d.text, "\n", &save); l != NULL;
             l = strtok_r(NULL, "\n", &save)) {
            const char *r = strstr(l, " test info: review uid=t0-");
            long i;

            if (r == NULL) {
                others++;
                continue;
            }
            i = strtol(r + strlen(" test info: review uid=t0-"), NULL, 10);
            if (i <= last || strstr(l, "decision=allow padding=") == NULL)
                bad++;
            last = i;
            seen++;
        }
        CHECK_INT(bad, 0);
    }
    CHECK_INT(seen + (long)dropped, FLOOD);
    CHECK_INT(others, reports); /* the reports, and nothing else */
    free(d.text);
}

/*
 * The queue's bounds with its writer blocked on a pipe nobody reads:
 * every push returns, without waiting for the writer; none is dropped
 * before the queue holds LOGRING_SIZE bytes (less the writer's report
 * room and a line); no more is queued than the queue and the pipe hold;
 * each drop counts exactly its own line. Once the pipe is read, exactly
 * the queued lines come out, whole and in order.
 */
static void
test_blocked(void)
{
    enum { LINE = 100, PUSHES = 2 * LOGRING_SIZE / LINE };
    static signed char rc[PUSHES];
    struct drain d = {0};
    char line[LINE + 32]; /* room for the widest %ld; each line is LINE */
    uint64_t before = logring_dropped();
    long queued = 0, first_drop = -1, pipe_size, bad = 0, next = 0;
    pthread_t th;
    int pfd[2];

    CHECK_INT(pipe(pfd), 0);
    /* A small pipe: the writer blocks in its first writes. */
    (void)fcntl(pfd[1], F_SETPIPE_SZ, 4096);
    pipe_size = fcntl(pfd[1], F_GETPIPE_SZ);
    CHECK(pipe_size > 0);
    CHECK_INT(logring_start(pfd[1], NULL), 0);
    for (long i = 0; i < PUSHES; i++) {
        CHECK_INT(snprintf(line, sizeof(line), "line %08ld %*s\n", i,
                           LINE - 15, "-"),
                  LINE);
        rc[i] = (signed char)logring_push(line, LINE);
        if (rc[i] == 0)
            queued++;
        else if (first_drop < 0)
            first_drop = i;
    }
    CHECK_INT(logring_dropped() - before, PUSHES - queued);
    CHECK(first_drop > 0);
    /* Dropped only once the ring was full; never more than it and the
     * pipe hold. */
    CHECK(first_drop * LINE > LOGRING_SIZE - LOGRING_REPORT_ROOM - LINE);
    CHECK(queued * LINE <= LOGRING_SIZE + pipe_size);

    d.fd = pfd[0];
    pthread_create(&th, NULL, drainer, &d);
    logring_stop();
    CHECK_INT(logring_push(line, LINE), -1); /* stopped: the caller writes */
    close(pfd[1]);
    pthread_join(th, NULL);
    close(pfd[0]);
    CHECK(d.text != NULL);
    if (d.text == NULL)
        return;
    CHECK_INT((long)strlen(d.text), queued * LINE);
    for (const char *p = d.text; *p != '\0'; p += LINE) {
        long i;

        while (next < PUSHES && rc[next] != 0)
            next++;
        if (sscanf(p, "line %8ld ", &i) != 1 || i != next ||
            p[LINE - 1] != '\n')
            bad++;
        next++;
    }
    CHECK_INT(bad, 0);
    free(d.text);
}

int
main(void)
{
    log_init("test");
    test_pieces();
    test_concurrent();
    test_full();
    test_blocked();
    CHECK_DONE();
}
