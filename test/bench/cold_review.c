/*
 * cold_review.c - one review run cold: what 1,000 reviews/s cost.
 *
 *   cold_review [-n CALLS] [-e KB]... FIXTURE...
 *
 * At 1,000 reviews/s the request thread sleeps a millisecond between
 * reviews, and what else runs on the machine takes back part of the
 * caches. Here each call of review_respond_in_place() (the whole review,
 * as `serve` makes it) comes after writing a buffer of KB kilobytes, which
 * pushes that much out of the caches: 0 is warm, a few MiB empties L1
 * and L2, hundreds of MiB most of L3. For each fixture and each -e
 * (default 0, 4096 and 262144), the median, p10 and p90 of CALLS (300)
 * single calls on the monotonic clock, as one JSON line.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json/jsonread.h"
#include "policy/table/snapshot.h"
#include "test/bench/bench_time.h"
#include "lib/file.h"
#include "webhook/review.h"

#define EVICT_MAX 8

/* Writes a byte per cache line of buf, so that its lines replace others. */
static void
evict(volatile unsigned char *buf, size_t size)
{
    for (size_t i = 0; i < size; i += 64)
        buf[i]++;
}

/*
 * As `serve` answers: the body just received into a buffer of its own
 * (written, so in the caches), read there in place, into the arena kept
 * from one review to the next as a pool thread keeps its own. work holds
 * len + 1.
 */
static int
one_review(struct jsonarena *arena, const struct snapshot *s,
           const char *body, size_t len, char *work, double *ns)
{
    struct review_result r;
    double t0;
    int rc;

    memcpy(work, body, len);
    t0 = bench_wall_ns();
    rc = review_respond_in_place(arena, s, NULL, work, len, &r);

    *ns = bench_wall_ns() - t0;
    rc = rc < 0 || r.http_status != 200 ? -1 : 0;
    review_result_free(&r);
    return rc;
}

static int
bench(struct jsonarena *arena, const struct snapshot *s, const char *path,
      long calls, const long *evict_kb, int n_evict, unsigned char *buf)
{
    size_t len;
    char *body = file_read(path, SIZE_MAX, &len);
    char *work = body != NULL ? malloc(len + 1) : NULL;
    double *t = malloc((size_t)calls * sizeof(*t)), warmup;
    int rc = -1;

    if (body == NULL || work == NULL || t == NULL) {
        fprintf(stderr, "cold_review: %s: %s\n", path,
                body == NULL ? strerror(errno) : "out of memory");
        goto out;
    }
    for (int e = 0; e < n_evict; e++) {
        size_t size = (size_t)evict_kb[e] * 1024;

        for (int i = 0; i < 10; i++)
            if (one_review(arena, s, body, len, work, &warmup) < 0)
                goto refused;
        for (long i = 0; i < calls; i++) {
            evict(buf, size);
            if (one_review(arena, s, body, len, work, &t[i]) < 0)
                goto refused;
        }
        bench_sort_ns(t, (size_t)calls);
        printf("{\"fixture\":\"%s\",\"bytes\":%zu,\"evict_kb\":%ld,"
               "\"calls\":%ld,\"median_ns\":%.0f,\"p10_ns\":%.0f,"
               "\"p90_ns\":%.0f}\n",
               path, len, evict_kb[e], calls, t[calls / 2], t[calls / 10],
               t[calls * 9 / 10]);
    }
    rc = 0;
    goto out;
refused:
    fprintf(stderr, "cold_review: %s: not answered 200\n", path);
out:
    free(body);
    free(work);
    free(t);
    return rc;
}

int
main(int argc, char **argv)
{
    long evict_kb[EVICT_MAX] = {0, 4096, 262144}, calls = 300, most = 0;
    int n_evict = 3, given = 0, c, status = 0;
    struct load_error err;
    struct jsonarena *arena;
    struct snapshot *s;
    unsigned char *buf;

    while ((c = getopt(argc, argv, "n:e:")) != -1) {
        if (c == 'n' && (calls = atol(optarg)) >= 10)
            continue;
        if (c == 'e' && given < EVICT_MAX && atol(optarg) >= 0) {
            evict_kb[given++] = atol(optarg);
            n_evict = given;
            continue;
        }
        fprintf(stderr, "usage: cold_review [-n CALLS >= 10] [-e KB]... "
                        "FIXTURE...\n");
        return 2;
    }
    if (optind >= argc)
        return fprintf(stderr, "cold_review: no fixture\n"), 2;
    for (int e = 0; e < n_evict; e++)
        most = evict_kb[e] > most ? evict_kb[e] : most;
    if ((buf = calloc((size_t)most * 1024 + 1, 1)) == NULL ||
        (arena = jsonarena_new()) == NULL)
        return fprintf(stderr, "cold_review: out of memory\n"), 1;
    memset(&err, 0, sizeof(err));
    if ((s = snapshot_parse_embedded(NULL, &err)) == NULL) {
        fprintf(stderr, "cold_review: embedded policy: %s\n", err.message);
        return 1;
    }
    for (int i = optind; i < argc; i++)
        if (bench(arena, s, argv[i], calls, evict_kb, n_evict, buf) < 0)
            status = 1;
    jsonarena_free(arena);
    snapshot_unref(s);
    free(buf);
    return status;
}
