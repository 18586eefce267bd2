/*
 * cpu_pace.c - how fast this CPU runs the review's parse right now.
 *
 *   cpu_pace FIXTURE [PARSES]
 *
 * Parses FIXTURE with jsonread() in the arena, as a review is parsed,
 * PARSES (300) times back to back and prints the median in nanoseconds
 * (wall time: run it pinned, on a CPU nothing else uses). The many-core
 * device's CPUs switch between two paces for the same code, about 4 and
 * 7 µs for the 6 KB review's parse, each CPU on its own and several
 * times a minute (a guest CPU whose host core is shared, most likely):
 * manycore-turns.sh runs this before and after each server's turn, so a
 * turn can be read against the pace around it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "test/bench/bench_time.h"
#include "webhook/file.h"
#include "webhook/jsonarena.h"
#include "webhook/jsonread.h"

/* One parse of text in a fresh arena: its time in ns, or -1. */
static double
timed_parse(const char *text, size_t len)
{
    cJSON *root;
    char msg[200];
    double t0, t1;
    enum jsonread_status status;

    if (jsonarena_begin() < 0)
        return -1;
    t0 = bench_wall_ns();
    status = jsonread(text, len, &root, msg, sizeof(msg));
    t1 = bench_wall_ns();
    if (status != JSONREAD_OK)
        fprintf(stderr, "cpu_pace: %s\n", msg);
    jsonarena_end();
    jsonarena_reset();
    return status == JSONREAD_OK ? t1 - t0 : -1;
}

int
main(int argc, char **argv)
{
    size_t len, n = argc > 2 ? strtoul(argv[2], NULL, 10) : 300;
    char *text;
    double *t;

    if (argc < 2 || n == 0) {
        fprintf(stderr, "usage: cpu_pace FIXTURE [PARSES]\n");
        return 2;
    }
    if ((text = file_read(argv[1], 64u << 20, &len)) == NULL) {
        perror(argv[1]);
        return 1;
    }
    if ((t = malloc(n * sizeof(*t))) == NULL)
        return 1;
    for (size_t i = 0; i < n; i++)
        if ((t[i] = timed_parse(text, len)) < 0)
            return 1;
    bench_sort_ns(t, n);
    printf("%.0f\n", t[n / 2]);
    free(t);
    free(text);
    return 0;
}
