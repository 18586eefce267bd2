/*
 * metrics.c - lock-free counters and their Prometheus text exposition.
 *
 * Instance-type labels live in a fixed open-addressed table. A slot's
 * name is written once, under the lock, and published with a release
 * store; readers probe without any lock and never see a name change or
 * disappear. That keeps the request path to one hash, a few strcmp()
 * and one atomic add, while a reload may add the names of a new table.
 * Old names are kept: a counter that vanished would read as a reset.
 */
#include "webhook/metrics.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/log.h"

#ifndef TOPOGATE_VERSION
#define TOPOGATE_VERSION "unknown"
#endif

/* Every verdict, then "error" for a review that got no decision. */
#define METRICS_VERDICTS (VERDICT_DENY + 1)
#define METRICS_ERROR METRICS_VERDICTS
#define METRICS_DECISIONS (METRICS_VERDICTS + 1)

/*
 * A power of two. Tables have tens of types; 384 names across all
 * reloads bounds the series at 386 x 6, and keeps probes short.
 */
#define METRICS_SLOTS 512
#define METRICS_TYPES_MAX (METRICS_SLOTS * 3 / 4)

struct series {
    _Atomic(char *) name;
    atomic_uint_least64_t n[METRICS_DECISIONS];
};

/* Webhook answers are expected from 100 us (small pod) to a few ms. */
static const struct {
    uint64_t us;
    const char *le;
} metrics_buckets[] = {
    {100, "0.0001"},  {250, "0.00025"}, {500, "0.0005"},  {1000, "0.001"},
    {2500, "0.0025"}, {5000, "0.005"},  {10000, "0.01"},  {25000, "0.025"},
    {50000, "0.05"},  {100000, "0.1"},  {250000, "0.25"}, {500000, "0.5"},
    {1000000, "1"},
};
#define METRICS_NBUCKETS (sizeof(metrics_buckets) / sizeof(metrics_buckets[0]))

/* The codes the admission listener answers with; the rest is "other". */
static const int metrics_codes[] = {200, 400, 404, 405, 413, 415, 500, 503};
#define METRICS_NCODES (sizeof(metrics_codes) / sizeof(metrics_codes[0]))

#define METRICS_RESTARTS 18
#define METRICS_KNOWN_BY 6

struct metrics {
    struct series none;    /* instance_type "" */
    struct series unknown; /* "unknown", or a name the policy never had */
    struct series types[METRICS_SLOTS];
    atomic_uint_least64_t buckets[METRICS_NBUCKETS + 1]; /* last: +Inf */
    atomic_uint_least64_t sum_us;
    atomic_uint_least64_t http[METRICS_NCODES + 1];    /* last: other */
    atomic_uint_least64_t reloads[METRICS_RELOADS][2]; /* [what][ok] */
    atomic_int_least64_t not_after; /* 0 until a certificate is set */
    atomic_bool view_on; /* a view was ever set: its series are shown */
    atomic_uint_least64_t view_nodes, view_kinds, view_synced;
    atomic_int_least64_t view_built_at;
    atomic_uint_least64_t restarts[METRICS_RESTARTS];
    atomic_uint_least64_t known_by[METRICS_KNOWN_BY];
    atomic_uint_least64_t judged[METRICS_VERDICTS][3]; /* [verdict][mode] */

    pthread_mutex_t lock; /* writers of types[]; the policy fields */
    size_t n_types;
    char *origin;
    uint64_t digest;
    char mode[16];
    char *extra; /* the live audit's series (metrics_set_extra), or NULL */
};

/* Why a watch loop went back to listing or backed off: kube.c's words. */
static const char *const restart_reasons[METRICS_RESTARTS] = {
    "expired",  "error_event", "dropped",      "http_429",  "http_5xx",
    "http_4xx", "http_other",  "timeout",      "stalled",   "unauthorized",
    "forbidden", "not_served", "watch_end",    "too_large", "bad_json",
    "tls",      "helper_exit", "other",
};

/* How a governed review knew the hardware: policy/pod/placement.h evidence. */
static const char *const known_by_names[METRICS_KNOWN_BY] = {
    "none", "pin", "policy", "nodes", "queue", "clique"};

/* A growing string; after a failed append it stays failed. */
struct buf {
    char *p;
    size_t len;
    size_t cap;
    bool failed;
};

static uint32_t
metrics_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */

    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/*
 * The slot holding name (*found set), or else the empty slot where it
 * would go; NULL when the table is full. *found comes from the same load
 * as the comparison: a slot filled meanwhile cannot be mistaken for it.
 */
static struct series *
metrics_slot(struct metrics *m, const char *name, bool *found)
{
    uint32_t i = metrics_hash(name);

    for (size_t n = 0; n < METRICS_SLOTS; n++, i++) {
        struct series *sr = &m->types[i & (METRICS_SLOTS - 1)];
        char *have = atomic_load_explicit(&sr->name, memory_order_acquire);
        *found = have != NULL && strcmp(have, name) == 0;
        if (have == NULL || *found)
            return sr;
    }
    *found = false;
    return NULL;
}

struct metrics *
metrics_new(void)
{
    struct metrics *m;

    /* Zeroed memory is a valid initial value of a lock-free atomic. */
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return NULL;
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

void
metrics_free(struct metrics *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < METRICS_SLOTS; i++)
        free(atomic_load(&m->types[i].name));
    free(m->origin);
    free(m->extra);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

int
metrics_set_policy(struct metrics *m, const struct snapshot *s)
{
    char *origin;
    int ret = -1;

    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < s->n_types; i++) {
        const char *name = s->types[i].name;
        bool found;
        struct series *sr = metrics_slot(m, name, &found);
        char *copy;

        if (found)
            continue;
        if (sr == NULL || m->n_types >= METRICS_TYPES_MAX) {
            log_warnx("metrics: too many instance types, '%s' counts as "
                      "unknown",
                      name);
            continue;
        }
        copy = strdup(name);
        if (copy == NULL)
            goto out;
        atomic_store_explicit(&sr->name, copy, memory_order_release);
        m->n_types++;
    }
    origin = strdup(s->origin != NULL ? s->origin : "");
    if (origin == NULL)
        goto out;
    free(m->origin);
    m->origin = origin;
    m->digest = s->digest;
    snprintf(m->mode, sizeof(m->mode), "%s", mode_name(s->mode));
    ret = 0;
out:
    pthread_mutex_unlock(&m->lock);
    return ret;
}

void
metrics_review(struct metrics *m, bool ok, enum verdict v,
               const char *instance_type, uint64_t micros)
{
    struct series *sr = &m->unknown;
    size_t d = ok && (unsigned)v < METRICS_VERDICTS ? (size_t)v : METRICS_ERROR;
    size_t b = 0;

    if (instance_type == NULL || instance_type[0] == '\0') {
        sr = &m->none;
    } else {
        bool found;
        struct series *slot = metrics_slot(m, instance_type, &found);
        if (found)
            sr = slot;
    }
    atomic_fetch_add_explicit(&sr->n[d], 1, memory_order_relaxed);

    while (b < METRICS_NBUCKETS && micros > metrics_buckets[b].us)
        b++;
    atomic_fetch_add_explicit(&m->buckets[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->sum_us, micros, memory_order_relaxed);
}

void
metrics_http(struct metrics *m, int code)
{
    size_t i = 0;

    while (i < METRICS_NCODES && metrics_codes[i] != code)
        i++;
    atomic_fetch_add_explicit(&m->http[i], 1, memory_order_relaxed);
}

void
metrics_reload(struct metrics *m, enum metrics_reload what, bool ok)
{
    if ((unsigned)what < METRICS_RELOADS)
        atomic_fetch_add_explicit(&m->reloads[what][ok ? 1 : 0], 1,
                                  memory_order_relaxed);
}

void
metrics_set_certificate(struct metrics *m, int64_t not_after)
{
    atomic_store_explicit(&m->not_after, not_after, memory_order_relaxed);
}

static void __attribute__((format(printf, 2, 3)))
buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (b->failed)
        return;
    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0)
            break;
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap * 2 + (size_t)n;
        char *p = realloc(b->p, cap);
        if (p == NULL)
            break;
        b->p = p;
        b->cap = cap;
    }
    b->failed = true;
}

/* A label value with \, " and newline escaped, as the format requires. */
static void
buf_label(struct buf *b, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '\\')
            buf_printf(b, "\\\\");
        else if (*s == '"')
            buf_printf(b, "\\\"");
        else if (*s == '\n')
            buf_printf(b, "\\n");
        else
            buf_printf(b, "%c", *s);
    }
}

static void
render_series(struct buf *b, struct series *sr, const char *label)
{
    for (size_t d = 0; d < METRICS_DECISIONS; d++) {
        uint64_t n = atomic_load_explicit(&sr->n[d], memory_order_relaxed);
        if (n == 0)
            continue;
        buf_printf(b,
                   "topogate_reviews_total{decision=\"%s\","
                   "instance_type=\"",
                   d == METRICS_ERROR ? "error"
                                      : verdict_name((enum verdict)d));
        buf_label(b, label);
        buf_printf(b, "\"} %llu\n", (unsigned long long)n);
    }
}

static void
render_reviews(struct buf *b, struct metrics *m)
{
    buf_printf(b, "# HELP topogate_reviews_total Admission reviews "
                  "answered, by decision and node instance type.\n"
                  "# TYPE topogate_reviews_total counter\n");
    render_series(b, &m->none, "none");
    render_series(b, &m->unknown, "unknown");
    for (size_t i = 0; i < METRICS_SLOTS; i++) {
        struct series *sr = &m->types[i];
        char *name = atomic_load_explicit(&sr->name, memory_order_acquire);
        if (name != NULL)
            render_series(b, sr, name);
    }
}

static void
render_duration(struct buf *b, struct metrics *m)
{
    uint64_t total = 0;

    buf_printf(b, "# HELP topogate_review_duration_seconds Time from a "
                  "review's request line to its answer being queued.\n"
                  "# TYPE topogate_review_duration_seconds histogram\n");
    /* _count is the sum of the buckets read here, so it equals +Inf. */
    for (size_t i = 0; i <= METRICS_NBUCKETS; i++) {
        total += atomic_load_explicit(&m->buckets[i], memory_order_relaxed);
        buf_printf(b,
                   "topogate_review_duration_seconds_bucket{le=\"%s\"} "
                   "%llu\n",
                   i < METRICS_NBUCKETS ? metrics_buckets[i].le : "+Inf",
                   (unsigned long long)total);
    }
    uint64_t sum = atomic_load_explicit(&m->sum_us, memory_order_relaxed);
    buf_printf(b, "topogate_review_duration_seconds_sum %llu.%06llu\n",
               (unsigned long long)(sum / 1000000),
               (unsigned long long)(sum % 1000000));
    buf_printf(b, "topogate_review_duration_seconds_count %llu\n",
               (unsigned long long)total);
}

static void
render_http(struct buf *b, struct metrics *m)
{
    buf_printf(b, "# HELP topogate_http_requests_total Responses of the "
                  "admission listener, by status code.\n"
                  "# TYPE topogate_http_requests_total counter\n");
    for (size_t i = 0; i <= METRICS_NCODES; i++) {
        uint64_t n = atomic_load_explicit(&m->http[i], memory_order_relaxed);
        if (n == 0)
            continue;
        if (i < METRICS_NCODES)
            buf_printf(b, "topogate_http_requests_total{code=\"%d\"} %llu\n",
                       metrics_codes[i], (unsigned long long)n);
        else
            buf_printf(b,
                       "topogate_http_requests_total{code=\"other\"} "
                       "%llu\n",
                       (unsigned long long)n);
    }
}

static void
render_reloads(struct buf *b, struct metrics *m)
{
    static const char *const what[METRICS_RELOADS] = {"policy", "certificate"};
    int64_t not_after;

    /* Every series from the start: an alert on errors needs a 0 first. */
    buf_printf(b, "# HELP topogate_reload_total Reloads of changed files, "
                  "by what and result; an error keeps the old in service.\n"
                  "# TYPE topogate_reload_total counter\n");
    for (size_t w = 0; w < METRICS_RELOADS; w++)
        for (int ok = 1; ok >= 0; ok--)
            buf_printf(b,
                       "topogate_reload_total{what=\"%s\",result=\"%s\"} "
                       "%llu\n",
                       what[w], ok ? "ok" : "error",
                       (unsigned long long)atomic_load_explicit(
                           &m->reloads[w][ok], memory_order_relaxed));
    not_after = atomic_load_explicit(&m->not_after, memory_order_relaxed);
    if (not_after != 0)
        buf_printf(b,
                   "# HELP topogate_certificate_not_after_seconds Expiry "
                   "(notAfter, Unix time) of the serving certificate.\n"
                   "# TYPE topogate_certificate_not_after_seconds gauge\n"
                   "topogate_certificate_not_after_seconds %lld\n",
                   (long long)not_after);
}

static void
render_info(struct buf *b, struct metrics *m)
{
    pthread_mutex_lock(&m->lock);
    if (m->origin != NULL) {
        buf_printf(b, "# HELP topogate_policy_info The policy in use.\n"
                      "# TYPE topogate_policy_info gauge\n"
                      "topogate_policy_info{origin=\"");
        buf_label(b, m->origin);
        buf_printf(b, "\",digest=\"%016llx\",mode=\"%s\"} 1\n",
                   (unsigned long long)m->digest, m->mode);
    }
    pthread_mutex_unlock(&m->lock);
    buf_printf(b,
               "# HELP topogate_build_info The running build.\n"
               "# TYPE topogate_build_info gauge\n"
               "topogate_build_info{version=\"%s\"} 1\n",
               TOPOGATE_VERSION);
}

void
metrics_set_view(struct metrics *m, size_t nodes, size_t kinds, bool synced,
                 int64_t built_at)
{
    m->view_on = true;
    atomic_store_explicit(&m->view_nodes, nodes, memory_order_relaxed);
    atomic_store_explicit(&m->view_kinds, kinds, memory_order_relaxed);
    atomic_store_explicit(&m->view_synced, synced, memory_order_relaxed);
    if (built_at)
        atomic_store_explicit(&m->view_built_at, built_at,
                              memory_order_relaxed);
}

static const char *const judged_modes[3] = {"enforce", "warn", "audit"};

void
metrics_judged(struct metrics *m, enum verdict judged, const char *mode)
{
    for (size_t i = 0; i < 3; i++)
        if (strcmp(judged_modes[i], mode) == 0 &&
            (unsigned)judged < METRICS_VERDICTS)
            atomic_fetch_add_explicit(&m->judged[judged][i], 1,
                                      memory_order_relaxed);
}

static void
render_judged(struct buf *b, struct metrics *m)
{
    buf_printf(b, "# HELP topogate_reviews_judged_total Governed reviews by "
                  "what enforce mode does with them, whatever the mode they "
                  "ran in: watch decision=\"deny\" in audit mode.\n"
                  "# TYPE topogate_reviews_judged_total counter\n");
    for (size_t v = 0; v < METRICS_VERDICTS; v++)
        for (size_t i = 0; i < 3; i++)
            buf_printf(b,
                       "topogate_reviews_judged_total{decision=\"%s\","
                       "mode=\"%s\"} %llu\n",
                       verdict_name((enum verdict)v), judged_modes[i],
                       (unsigned long long)atomic_load(&m->judged[v][i]));
}

void
metrics_known_by(struct metrics *m, const char *how)
{
    for (size_t i = 0; i < METRICS_KNOWN_BY; i++)
        if (strcmp(known_by_names[i], how) == 0)
            atomic_fetch_add_explicit(&m->known_by[i], 1,
                                      memory_order_relaxed);
}

static void
render_known_by(struct buf *b, struct metrics *m)
{
    buf_printf(b, "# HELP topogate_reviews_known_by_total Governed reviews "
                  "by how the hardware was known: a pin, the policy, the "
                  "cluster's nodes, a Kueue queue, a ComputeDomain on "
                  "gpu.clique nodes, or none.\n"
                  "# TYPE topogate_reviews_known_by_total counter\n");
    for (size_t i = 0; i < METRICS_KNOWN_BY; i++)
        buf_printf(b, "topogate_reviews_known_by_total{known_by=\"%s\"} "
                      "%llu\n",
                   known_by_names[i],
                   (unsigned long long)atomic_load(&m->known_by[i]));
}

void
metrics_watch_restart(struct metrics *m, const char *reason)
{
    size_t i = 0;

    while (i < METRICS_RESTARTS - 1 && strcmp(restart_reasons[i], reason))
        i++;
    atomic_fetch_add_explicit(&m->restarts[i], 1, memory_order_relaxed);
}

static void
render_view(struct buf *b, struct metrics *m)
{
    int64_t built =
        atomic_load_explicit(&m->view_built_at, memory_order_relaxed);

    if (!m->view_on)
        return;
    buf_printf(b,
               "# HELP topogate_view_nodes GPU nodes in the cluster view.\n"
               "# TYPE topogate_view_nodes gauge\n"
               "topogate_view_nodes %llu\n"
               "# HELP topogate_view_kinds Kinds of GPU node in the view.\n"
               "# TYPE topogate_view_kinds gauge\n"
               "topogate_view_kinds %llu\n"
               "# HELP topogate_view_synced 1 when every watched resource is "
               "listed and watched; 0: decisions fall back to pins.\n"
               "# TYPE topogate_view_synced gauge\n"
               "topogate_view_synced %llu\n",
               (unsigned long long)atomic_load(&m->view_nodes),
               (unsigned long long)atomic_load(&m->view_kinds),
               (unsigned long long)atomic_load(&m->view_synced));
    if (built)
        buf_printf(b,
                   "# HELP topogate_view_age_seconds Seconds since the "
                   "view in service was last known current (built or "
                   "confirmed with every resource in sync).\n"
                   "# TYPE topogate_view_age_seconds gauge\n"
                   "topogate_view_age_seconds %lld\n",
                   (long long)(time(NULL) - built));
    buf_printf(b, "# HELP topogate_watch_restarts_total Transitions of the "
                  "apiserver watch loops, by reason.\n"
                  "# TYPE topogate_watch_restarts_total counter\n");
    for (size_t i = 0; i < METRICS_RESTARTS; i++)
        buf_printf(b, "topogate_watch_restarts_total{reason=\"%s\"} %llu\n",
                   restart_reasons[i],
                   (unsigned long long)atomic_load(&m->restarts[i]));
}

/* Lines the log queue dropped (lib/logring.h): never silently. */
static void
render_log(struct buf *b)
{
    buf_printf(b,
               "# HELP topogate_log_dropped_lines_total Log lines dropped "
               "because the log queue was full or a write failed.\n"
               "# TYPE topogate_log_dropped_lines_total counter\n"
               "topogate_log_dropped_lines_total %llu\n",
               (unsigned long long)log_dropped());
}

/* The series a module above the server renders itself (the live
 * audit's gauges by namespace: clusterview/liveaudit.c). */
static void
render_extra(struct buf *b, struct metrics *m)
{
    pthread_mutex_lock(&m->lock);
    if (m->extra != NULL)
        buf_printf(b, "%s", m->extra);
    pthread_mutex_unlock(&m->lock);
}

void
metrics_set_extra(struct metrics *m, char *text)
{
    char *old;

    pthread_mutex_lock(&m->lock);
    old = m->extra;
    m->extra = text;
    pthread_mutex_unlock(&m->lock);
    free(old);
}

char *
metrics_render(struct metrics *m)
{
    struct buf b = {.cap = 4096};

    b.p = malloc(b.cap);
    if (b.p == NULL)
        return NULL;
    render_reviews(&b, m);
    render_duration(&b, m);
    render_http(&b, m);
    render_reloads(&b, m);
    render_known_by(&b, m);
    render_judged(&b, m);
    render_view(&b, m);
    render_info(&b, m);
    render_log(&b);
    render_extra(&b, m);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
