/*
 * bench_time.h - what the in-process bench tools (decide_bench,
 * view_bench, cold_review) time with, and how they order their timings.
 */
#ifndef TOPOGATE_BENCH_TIME_H
#define TOPOGATE_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

static inline double
bench_ns(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* This thread's CPU time: other processes on a shared machine do not
 * count. For batches of calls. */
static inline double
bench_cpu_ns(void)
{
    return bench_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* The time that passed, stalls and all: for one call at a time. */
static inline double
bench_wall_ns(void)
{
    return bench_ns(CLOCK_MONOTONIC);
}

static inline int
bench_cmp_ns(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* t[0..n) sorted, ascending: t[n / 2] is the median. */
static inline void
bench_sort_ns(double *t, size_t n)
{
    qsort(t, n, sizeof(*t), bench_cmp_ns);
}

#endif
