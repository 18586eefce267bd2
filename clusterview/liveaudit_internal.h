/*
 * liveaudit_internal.h - what the live audit's files share: liveaudit.c
 * (pods, jobs and namespaces kept; the helper's lines; the tick),
 * liveaudit_judge.c (a job judged) and liveaudit_out.c (Events,
 * reports, gauges). The watch thread alone touches any of it.
 */
#ifndef TOPOGATE_LIVEAUDIT_INTERNAL_H
#define TOPOGATE_LIVEAUDIT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base/strbuf.h"
#include "clusterview/liveaudit.h"
#include "clusterview/liveresources.h"

/* Judged at most this often, however fast pods change. */
#define JUDGE_INTERVAL_MS 1000
/* The most GPU pods kept: past it, new pods are counted, not kept. */
#define PODS_MAX 50000
/* A report keeps this many results (fail, then warn, then the rest);
 * its summary counts them all. etcd takes 1.5 MiB a request. */
#define RESULTS_MAX 1000
/* Namespaces with series of their own; the rest are "(other)". */
#define SERIES_NS_MAX 500
/* Events: a burst, then one per interval. */
#define EVENT_BURST 10
#define EVENT_EVERY_MS 6000
/* A write that failed is tried again after this long. */
#define RETRY_MS 30000
/* Commands waiting for the helper's stdin: past this, dropped. */
#define QUEUE_MAX (64u << 20)
#define LIVE_RES_MAX 8

/* The slow paths a workload's pods can be on: gauge labels. */
enum slow {
    SLOW_NVLINK, /* a fragmented layout: NVLink split across pods */
    SLOW_NICS,   /* the node's RDMA NICs not given to the pod */
    SLOW_SHM,    /* no /dev/shm (or hostIPC) for NCCL */
    SLOWS
};
extern const char *const live_slow_label[SLOWS];
extern const char *const live_slow_rule[SLOWS];
extern const char *const live_slow_reason[SLOWS];

/* PolicyReport results, worst last. */
enum result { RES_SKIP, RES_PASS, RES_WARN, RES_FAIL };
extern const char *const live_result_name[];

enum crd { CRD_UNKNOWN, CRD_SERVED, CRD_NOT_SERVED, CRD_FORBIDDEN, CRDS };
extern const char *const live_crd_name[CRDS];
extern const char *const live_write_what[4];
extern const char *const live_write_code[6];

/* --- a string-keyed table ---------------------------------------------- */

struct entry {
    struct entry *next;
    char *key;
};

struct map {
    struct entry **b;
    size_t cap, n;
};

#define MAP_EACH(m, x)                                                         \
    for (size_t i_##x = 0; i_##x < (m)->cap; i_##x++)                          \
        for (struct entry *x = (m)->b[i_##x], *nx_##x = x ? x->next : NULL; x; \
             x = nx_##x, nx_##x = x ? x->next : NULL)

/* --- what is kept ------------------------------------------------------- */

struct nsrep;
struct live_wl;

struct pod {
    struct entry e; /* "ns/name" */
    char *text;     /* the slimmed pod, compact JSON */
    long gpus;
    int res;      /* the watch that last told of it */
    unsigned gen; /* that watch's list it was last seen in */
    struct live_wl *w;
    struct pod *prev, *next; /* the workload's pods */
};

struct live_wl {
    struct entry e; /* "ns\x1flabel\x1fname" */
    struct nsrep *ns;
    char *label, *name, *api_version, *kind, *uid;
    struct pod *pods;
    size_t n_pods;
    bool dirty;
    /* What it was judged. */
    enum result result;
    char *rule, *message;
    unsigned slow;        /* bits of enum slow */
    long gpus, slow_gpus; /* of its pods; of those on a slow path */
    int64_t since;        /* when result or message last changed */
    unsigned evented;     /* slow reasons an Event was sent for */
    unsigned held;        /* reasons whose Event the limit held back */
    unsigned fixed;       /* reasons a Normal Event says are fixed */
    struct live_wl *prev, *next; /* the namespace's workloads */
};

struct nsrep {
    struct entry e; /* the namespace */
    struct live_wl *workloads;
    size_t n_workloads;
    bool dirty;
    bool exists;   /* a report of ours is in the cluster */
    unsigned seen; /* the reports' list it was last seen in */
    char *sent;    /* the last report body sent, or NULL */
    uint64_t retry_ms;
};

struct liveaudit {
    struct server *srv;
    struct metrics *metrics;
    struct map pods, workloads, ns;
    /* The live resources' lists, by live_resources() index. */
    unsigned gen[LIVE_RES_MAX];
    bool listing[LIVE_RES_MAX];
    bool synced[LIVE_RES_MAX];
    enum crd crd;
    /* What the last judging used, held so a new one is told apart. */
    struct snapshot *s;
    struct view *v;
    bool all_dirty;
    uint64_t judged_ms, judge_us;
    uint64_t now_ms; /* of the last tick */
    /* Events: tokens left, and when the next one comes. */
    unsigned tokens;
    uint64_t token_ms;
    struct strbuf queue; /* commands for the helper's stdin */
    size_t queue_off;
    /* Counters. */
    uint64_t writes[4][6]; /* [what][code class] */
    uint64_t events_limited, pods_dropped, queue_dropped;
    bool metrics_dirty;
};

/* liveaudit.c */
char *live_xstrdup(const char *s);
int64_t live_wall_s(void);
/* Frees the report text last sent to n's namespace and forgets it. */
void live_ns_forget_sent(struct nsrep *n);
void live_ns_maybe_free(struct liveaudit *la, struct nsrep *n);
void live_queue_cmd(struct liveaudit *la, cJSON *cmd);
cJSON *live_cmd_new(const char *op, const char *ns);
void live_event_name(const struct live_wl *w, enum slow k, char *out,
                     size_t len);
/* The Normal Event that says reason k is fixed: the Warning's name with
 * "-fixed". */
void live_fixed_event_name(const struct live_wl *w, enum slow k, char *out,
                           size_t len);
bool live_pods_synced(const struct liveaudit *la);

/* liveaudit_judge.c: judges w again (its pods), marking what changed. */
void live_judge_workload(struct liveaudit *la, struct live_wl *w);

/* liveaudit_out.c */
void live_send_events(struct liveaudit *la, struct live_wl *w, uint64_t now);
void live_write_report(struct liveaudit *la, struct nsrep *n, uint64_t now);
void live_render_metrics(struct liveaudit *la);

#endif
