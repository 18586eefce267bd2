/*
 * liveaudit.c - see liveaudit.h.
 *
 * What is kept: each GPU pod of a training workload as the helper cut
 * it (liveresources.c), as compact JSON text (parsed again to judge),
 * grouped by workload (namespace, the label that names it, its value),
 * and the workloads grouped by namespace. A workload is judged again
 * when one of its pods changes, and every workload when the policy or
 * the view changes; each pod through audit_object(), as `topogate
 * audit` judges a Pod, and the workload's result is its worst pod's.
 *
 * Writes: a namespace's report is sent when its text differs from the
 * last one sent (a result's timestamp is when it last changed, so an
 * unchanged report is never sent again); an Event once per workload
 * and reason, at most EVENT_BURST at once and one per EVENT_EVERY_MS
 * after; when a workload goes, its results leave the report and its
 * Events are deleted. Nothing is written before every pod watch has
 * listed, nor while the PolicyReport CRD is not served or not ours.
 */
#include "clusterview/liveaudit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "clusterview/liveresources.h"
#include "lib/log.h"
#include "policy/audit/audit.h"
#include "policy/view/view.h"
#include "webhook/metrics.h"
#include "webhook/server.h"

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
static const char *const slow_label[SLOWS] = {"nvlink_split", "missing_nics",
                                              "missing_shm"};
static const char *const slow_rule[SLOWS] = {
    "fragmented-layout", "missing-nics", "missing-shm"};
static const char *const slow_reason[SLOWS] = {
    "FragmentedLayout", "MissingRDMANICs", "MissingDevShm"};

/* PolicyReport results, worst last. */
enum result { RES_SKIP, RES_PASS, RES_WARN, RES_FAIL };
static const char *const result_name[] = {"skip", "pass", "warn", "fail"};

enum crd { CRD_UNKNOWN, CRD_SERVED, CRD_NOT_SERVED, CRD_FORBIDDEN, CRDS };
static const char *const crd_name[CRDS] = {"unknown", "served", "not_served",
                                           "forbidden"};

/* --- a string-keyed table ---------------------------------------------- */

struct entry {
    struct entry *next;
    char *key;
};

struct map {
    struct entry **b;
    size_t cap, n;
};

static uint64_t
fnv(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static struct entry *
map_get(const struct map *m, const char *key)
{
    struct entry *e;

    if (m->cap == 0)
        return NULL;
    for (e = m->b[fnv(key) & (m->cap - 1)]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static int
map_put(struct map *m, struct entry *e)
{
    if (m->n + 1 > m->cap / 2) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        struct entry **b = calloc(cap, sizeof(*b));
        if (b == NULL)
            return -1;
        for (size_t i = 0; i < m->cap; i++)
            for (struct entry *x = m->b[i], *nx; x; x = nx) {
                nx = x->next;
                x->next = b[fnv(x->key) & (cap - 1)];
                b[fnv(x->key) & (cap - 1)] = x;
            }
        free(m->b);
        m->b = b;
        m->cap = cap;
    }
    e->next = m->b[fnv(e->key) & (m->cap - 1)];
    m->b[fnv(e->key) & (m->cap - 1)] = e;
    m->n++;
    return 0;
}

static void
map_del(struct map *m, struct entry *e)
{
    struct entry **p = &m->b[fnv(e->key) & (m->cap - 1)];

    for (; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            m->n--;
            return;
        }
}

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
    unsigned slow;            /* bits of enum slow */
    long gpus, slow_gpus;     /* of its pods; of those on a slow path */
    int64_t since;            /* when result or message last changed */
    unsigned evented;         /* slow reasons an Event was sent for */
    struct live_wl *prev, *next; /* the namespace's workloads */
};

struct nsrep {
    struct entry e; /* the namespace */
    struct live_wl *workloads;
    size_t n_workloads;
    bool dirty;
    bool exists;      /* a report of ours is in the cluster */
    unsigned seen;    /* the reports' list it was last seen in */
    char *sent;       /* the last report body sent, or NULL */
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

static const char *const write_what[4] = {"report", "unreport", "event",
                                          "unevent"};
static const char *const write_code[6] = {"2xx", "403", "404",
                                          "409", "other", "none"};

static char *
xstrdup(const char *s)
{
    return strdup(s ? s : "");
}

static int64_t
wall_s(void)
{
    return (int64_t)time(NULL);
}

/* --- pods and workloads -------------------------------------------------- */

static struct nsrep *
ns_get(struct liveaudit *la, const char *name, bool make)
{
    struct nsrep *n = (struct nsrep *)map_get(&la->ns, name);

    if (n != NULL || !make)
        return n;
    if ((n = calloc(1, sizeof(*n))) == NULL ||
        (n->e.key = strdup(name)) == NULL || map_put(&la->ns, &n->e) < 0) {
        if (n)
            free(n->e.key);
        free(n);
        return NULL;
    }
    return n;
}

/* A namespace with no workload and no report of ours is forgotten. */
static void
ns_maybe_free(struct liveaudit *la, struct nsrep *n)
{
    if (n->n_workloads > 0 || n->exists || n->sent != NULL)
        return;
    map_del(&la->ns, &n->e);
    free(n->e.key);
    free(n);
}

static void
queue_cmd(struct liveaudit *la, cJSON *cmd)
{
    char *text = cJSON_PrintUnformatted(cmd);

    cJSON_Delete(cmd);
    if (text == NULL || la->queue.len + strlen(text) + 1 > QUEUE_MAX) {
        la->queue_dropped++;
        free(text);
        return;
    }
    strbuf_puts(&la->queue, text);
    strbuf_puts(&la->queue, "\n");
    free(text);
}

static cJSON *
cmd_new(const char *op, const char *ns)
{
    cJSON *c = cJSON_CreateObject();

    cJSON_AddStringToObject(c, "op", op);
    cJSON_AddStringToObject(c, "ns", ns);
    return c;
}

/* The Event of a workload and reason: one name, so a second create is
 * a 409 and nothing more. */
static void
event_name(const struct live_wl *w, enum slow k, char *out, size_t len)
{
    snprintf(out, len, "%.200s.topogate-%s", w->name, slow_rule[k]);
}

static void
workload_free(struct liveaudit *la, struct live_wl *w)
{
    struct nsrep *n = w->ns;
    char name[256];

    /* Its Events go with it. */
    for (int k = 0; k < SLOWS; k++)
        if (w->evented & (1u << k)) {
            cJSON *c = cmd_new("unevent", n->e.key);
            event_name(w, (enum slow)k, name, sizeof(name));
            cJSON_AddStringToObject(c, "name", name);
            queue_cmd(la, c);
        }
    if (w->prev)
        w->prev->next = w->next;
    else
        n->workloads = w->next;
    if (w->next)
        w->next->prev = w->prev;
    n->n_workloads--;
    n->dirty = true;
    map_del(&la->workloads, &w->e);
    free(w->e.key);
    free(w->label);
    free(w->name);
    free(w->api_version);
    free(w->kind);
    free(w->uid);
    free(w->rule);
    free(w->message);
    free(w);
    la->metrics_dirty = true;
    ns_maybe_free(la, n);
}

static void
pod_free(struct liveaudit *la, struct pod *p)
{
    struct live_wl *w = p->w;

    if (p->prev)
        p->prev->next = p->next;
    else
        w->pods = p->next;
    if (p->next)
        p->next->prev = p->prev;
    map_del(&la->pods, &p->e);
    free(p->e.key);
    free(p->text);
    free(p);
    w->dirty = true;
    if (--w->n_pods == 0)
        workload_free(la, w);
}

static struct live_wl *
workload_get(struct liveaudit *la, const char *ns, const struct live_owner *o)
{
    struct strbuf key = {0};
    struct live_wl *w;
    struct nsrep *n;

    strbuf_printf(&key, "%s\x1f%s\x1f%s", ns, o->label, o->name);
    if (key.failed)
        return NULL;
    if ((w = (struct live_wl *)map_get(&la->workloads, key.buf)) != NULL) {
        strbuf_free(&key);
        return w;
    }
    if ((n = ns_get(la, ns, true)) == NULL ||
        (w = calloc(1, sizeof(*w))) == NULL) {
        strbuf_free(&key);
        return NULL;
    }
    w->e.key = key.buf;
    w->ns = n;
    w->label = xstrdup(o->label);
    w->name = xstrdup(o->name);
    w->api_version = xstrdup(o->api_version);
    w->kind = xstrdup(o->kind);
    w->uid = o->uid ? strdup(o->uid) : NULL;
    if (w->label == NULL || w->name == NULL || w->api_version == NULL ||
        w->kind == NULL || map_put(&la->workloads, &w->e) < 0) {
        free(w->label);
        free(w->name);
        free(w->api_version);
        free(w->kind);
        free(w->uid);
        free(w->e.key);
        free(w);
        return NULL;
    }
    w->next = n->workloads;
    if (n->workloads)
        n->workloads->prev = w;
    n->workloads = w;
    n->n_workloads++;
    w->dirty = true;
    return w;
}

static const char *
str_at(const cJSON *o, const char *a, const char *b)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(o, a), b));
}

static bool
same_workload(const struct live_wl *w, const char *ns,
              const struct live_owner *o)
{
    return strcmp(w->ns->e.key, ns) == 0 && strcmp(w->label, o->label) == 0 &&
           strcmp(w->name, o->name) == 0;
}

/* A pod as a list or a watch tells of it (deleted: gone). */
static void
pod_seen(struct liveaudit *la, int res, const cJSON *obj, bool deleted)
{
    const char *ns = str_at(obj, "metadata", "namespace");
    const char *name = str_at(obj, "metadata", "name");
    const char *phase = str_at(obj, "status", "phase");
    struct strbuf key = {0};
    struct live_owner o;
    struct live_wl *w;
    struct pod *p;
    char *text;

    if (ns == NULL || name == NULL)
        return;
    strbuf_printf(&key, "%s/%s", ns, name);
    if (key.failed)
        return;
    p = (struct pod *)map_get(&la->pods, key.buf);
    /* Only a running pod is on a slow path now; one that finished, or
     * waits, is not (it is judged when it runs). */
    if (deleted || phase == NULL || strcmp(phase, "Running") != 0 ||
        !live_owner(obj, &o)) {
        if (p != NULL)
            pod_free(la, p);
        strbuf_free(&key);
        return;
    }
    if ((text = cJSON_PrintUnformatted(obj)) == NULL) {
        strbuf_free(&key);
        return;
    }
    if (p != NULL) {
        p->res = res;
        p->gen = la->gen[res];
        if (strcmp(p->text, text) == 0) {
            free(text); /* nothing decide() reads changed */
            strbuf_free(&key);
            return;
        }
        if (same_workload(p->w, ns, &o)) {
            free(p->text);
            p->text = text;
            p->gpus = live_pod_gpus(obj);
            p->w->dirty = true;
            strbuf_free(&key);
            return;
        }
        /* Relabelled into another workload: out of the old one. */
        pod_free(la, p);
    }
    if (la->pods.n >= PODS_MAX) {
        if (la->pods_dropped++ == 0)
            log_warnx("live audit: more than %d GPU pods: the rest are not "
                      "judged",
                      PODS_MAX);
        free(text);
        strbuf_free(&key);
        return;
    }
    if ((w = workload_get(la, ns, &o)) == NULL ||
        (p = calloc(1, sizeof(*p))) == NULL) {
        free(text);
        strbuf_free(&key);
        return;
    }
    p->e.key = key.buf;
    p->text = text;
    p->gpus = live_pod_gpus(obj);
    p->res = res;
    p->gen = la->gen[res];
    p->w = w;
    if (map_put(&la->pods, &p->e) < 0) {
        free(p->text);
        free(p->e.key);
        free(p);
        if (w->n_pods == 0)
            workload_free(la, w);
        return;
    }
    p->next = w->pods;
    if (w->pods)
        w->pods->prev = p;
    w->pods = p;
    w->n_pods++;
    w->dirty = true;
    la->metrics_dirty = true;
}

/* A whole list of one pod watch: the pods it told of before and not in
 * this list are gone. */
static void
pods_listed(struct liveaudit *la, int res)
{
    MAP_EACH(&la->pods, e)
    {
        struct pod *p = (struct pod *)e;
        if (p->res == res && p->gen != la->gen[res])
            pod_free(la, p);
    }
}

/* --- our reports, as the cluster has them ------------------------------- */

static void
report_seen(struct liveaudit *la, int res, const cJSON *obj, bool deleted)
{
    const char *ns = str_at(obj, "metadata", "namespace");
    const char *name = str_at(obj, "metadata", "name");
    struct nsrep *n;

    if (ns == NULL || name == NULL || strcmp(name, LIVE_REPORT_NAME) != 0 ||
        (n = ns_get(la, ns, !deleted)) == NULL)
        return;
    n->exists = !deleted;
    n->seen = la->gen[res];
    if (deleted) {
        /* Someone deleted it (or we did): written again if needed. */
        free(n->sent);
        n->sent = NULL;
    }
    n->dirty = true;
    ns_maybe_free(la, n);
}

static void
reports_listed(struct liveaudit *la, int res)
{
    MAP_EACH(&la->ns, e)
    {
        struct nsrep *n = (struct nsrep *)e;
        if (n->exists && n->seen != la->gen[res]) {
            n->exists = false;
            n->dirty = true;
            ns_maybe_free(la, n);
        }
    }
}

static void
all_ns_dirty(struct liveaudit *la, bool forget_sent)
{
    MAP_EACH(&la->ns, e)
    {
        struct nsrep *n = (struct nsrep *)e;
        n->dirty = true;
        if (forget_sent) {
            free(n->sent);
            n->sent = NULL;
        }
    }
}

static void
set_crd(struct liveaudit *la, enum crd c)
{
    if (c == la->crd)
        return;
    if (c == CRD_SERVED)
        all_ns_dirty(la, true); /* a new CRD: every report again */
    if (la->crd == CRD_SERVED || c == CRD_SERVED)
        log_info("live audit: PolicyReports %s",
                 c == CRD_SERVED       ? "served: writing them"
                 : c == CRD_FORBIDDEN  ? "not ours to read or write (RBAC): "
                                         "none written"
                 : c == CRD_NOT_SERVED ? "not served (no CRD): none written"
                                       : "unknown");
    la->crd = c;
    la->metrics_dirty = true;
}

/* --- the helper's answers ------------------------------------------------ */

static void
on_wrote(struct liveaudit *la, const cJSON *l)
{
    const char *what = cJSON_GetStringValue(cJSON_GetObjectItem(l, "what"));
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItem(l, "ns"));
    long code = (long)cJSON_GetNumberValue(cJSON_GetObjectItem(l, "code"));
    int wi = -1, ci;
    struct nsrep *n;

    for (int i = 0; what && i < 4; i++)
        if (strcmp(what, write_what[i]) == 0)
            wi = i;
    if (wi < 0)
        return;
    ci = code >= 200 && code < 300 ? 0
         : code == 403             ? 1
         : code == 404             ? 2
         : code == 409             ? 3
         : code == 0               ? 5
                                   : 4;
    la->writes[wi][ci]++;
    la->metrics_dirty = true;
    n = ns ? ns_get(la, ns, false) : NULL;
    if (wi == 0 && n != NULL) {
        if (ci == 0) {
            n->exists = true;
        } else {
            /* Not written: again later, or when the CRD is back. */
            free(n->sent);
            n->sent = NULL;
            n->dirty = true;
            n->retry_ms = la->now_ms + RETRY_MS;
            if (code == 404)
                set_crd(la, CRD_NOT_SERVED);
            else if (code == 403)
                set_crd(la, CRD_FORBIDDEN);
        }
    } else if (wi == 1 && n != NULL && (ci == 0 || code == 404)) {
        n->exists = false;
        ns_maybe_free(la, n);
    }
}

/* --- lines ---------------------------------------------------------------- */

static bool
pods_synced(const struct liveaudit *la)
{
    size_t n;
    const struct kube_resource *r = live_resources(&n);

    for (size_t i = 0; i < n && i < LIVE_RES_MAX; i++)
        if (strcmp(r[i].name, LIVE_REPORTS) != 0 && !la->synced[i])
            return false;
    return true;
}

bool
liveaudit_line(struct liveaudit *la, const char *op, const char *res,
               const cJSON *l)
{
    int ri;
    bool reports;
    const cJSON *obj = cJSON_GetObjectItem(l, "object");

    if (op && strcmp(op, "wrote") == 0) {
        on_wrote(la, l);
        return true;
    }
    if (op == NULL || (ri = live_resource_index(res)) < 0 ||
        ri >= LIVE_RES_MAX)
        return false;
    reports = strcmp(res, LIVE_REPORTS) == 0;
    if (strcmp(op, "item") == 0) {
        if (!la->listing[ri]) {
            la->listing[ri] = true;
            la->gen[ri]++;
        }
        if (reports)
            report_seen(la, ri, obj, false);
        else
            pod_seen(la, ri, obj, false);
    } else if (strcmp(op, "listed") == 0) {
        bool whole = cJSON_IsTrue(cJSON_GetObjectItem(l, "whole"));
        if (whole && !la->listing[ri])
            la->gen[ri]++; /* an empty list */
        la->listing[ri] = false;
        if (whole && reports)
            reports_listed(la, ri);
        else if (whole)
            pods_listed(la, ri);
    } else if (strcmp(op, "event") == 0) {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(l, "type"));
        bool gone = type && strcmp(type, "DELETED") == 0;
        if (reports)
            report_seen(la, ri, obj, gone);
        else
            pod_seen(la, ri, obj, gone);
    } else if (strcmp(op, "state") == 0) {
        bool synced = cJSON_IsTrue(cJSON_GetObjectItem(l, "synced"));
        const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(l, "why"));
        la->synced[ri] = synced;
        if (reports)
            set_crd(la, synced                             ? CRD_SERVED
                        : why && strstr(why, "not served") ? CRD_NOT_SERVED
                        : why && strstr(why, "forbidden")  ? CRD_FORBIDDEN
                                                           : la->crd);
        if (synced && !reports && pods_synced(la))
            all_ns_dirty(la, false); /* stale reports can go now */
        la->metrics_dirty = true;
    } else if (strcmp(op, "restart") == 0 && la->metrics) {
        metrics_watch_restart(
            la->metrics,
            cJSON_GetStringValue(cJSON_GetObjectItem(l, "reason")) ?: "other");
    }
    return true;
}

void
liveaudit_helper_ended(struct liveaudit *la)
{
    memset(la->listing, 0, sizeof(la->listing));
    memset(la->synced, 0, sizeof(la->synced));
    strbuf_free(&la->queue);
    la->queue_off = 0;
    /* What was queued or in flight may not have been written. */
    all_ns_dirty(la, true);
    la->metrics_dirty = true;
}

/* --- judging ----------------------------------------------------------- */

/* Which slow paths a decision finds a running pod on. */
static unsigned
slow_paths(const struct decision *d)
{
    unsigned bits = 0;
    const char *texts[2] = {d->would_patch, NULL};

    if (d->reason && strstr(d->reason, "fragmented layout"))
        bits |= 1u << SLOW_NVLINK;
    for (size_t i = 0; i < d->n_ops; i++) {
        const char *p = d->ops[i].path;
        if (strstr(p, "/resources/") && !strstr(p, "nvidia.com~1gpu"))
            bits |= 1u << SLOW_NICS;
        if (strstr(p, "/volumes") || strstr(p, "/volumeMounts") ||
            strstr(p, "/hostIPC"))
            bits |= 1u << SLOW_SHM;
    }
    /* Audit mode: the ops it would have made. */
    for (int i = 0; texts[i]; i++) {
        if (strstr(texts[i], "/resources/") &&
            strstr(texts[i], "\"path\":\"/spec/containers") &&
            (strstr(texts[i], "efa") || strstr(texts[i], "rdma")))
            bits |= 1u << SLOW_NICS;
        if (strstr(texts[i], "/volumes") || strstr(texts[i], "/hostIPC"))
            bits |= 1u << SLOW_SHM;
    }
    /* Split across pods, the fix is the job's shape (whole nodes, which
     * brings the rest): that alone is said, in every mode (a deny has
     * no patch to tell more by). */
    return bits & (1u << SLOW_NVLINK) ? 1u << SLOW_NVLINK : bits;
}

/* What a patch adds, for people ("/dev/shm, EFA"): the ops made, or in
 * audit mode the ops it would have made (their text). Owned. */
static char *
patch_fields(const struct decision *d)
{
    static const struct {
        const char *needle, *field;
    } fields[] = {
        {"/hostIPC", "hostIPC"},      {"/volumes", "/dev/shm"},
        {"IPC_LOCK", "IPC_LOCK"},     {"efa", "EFA"},
        {"rdma~1", "RDMA NICs"},      {"/tolerations", "tolerations"},
        {"/env", "env"},
    };
    struct strbuf sb = {0};
    size_t n = 0;

    if (d->n_ops > 0 || d->would_patch == NULL)
        return decision_fields(d);
    strbuf_puts(&sb, "");
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (strstr(d->would_patch, fields[i].needle))
            strbuf_printf(&sb, "%s%s", n++ ? ", " : "", fields[i].field);
    return strbuf_take(&sb);
}

/* One pod judged: its result, slow paths and message (owned). */
static enum result
judge_pod(const struct snapshot *s, const struct view *v, const char *text,
          unsigned *slow, char **message)
{
    cJSON *obj = cJSON_Parse(text);
    struct audit_item it;
    enum result r = RES_SKIP;
    struct strbuf m = {0};

    *slow = 0;
    *message = NULL;
    if (obj == NULL)
        return RES_SKIP;
    if (audit_object(s, v, obj, NULL, &it) == 0 && it.n_pods == 1) {
        const struct decision *d = &it.pods[0].d;
        enum audit_outcome o = outcome_of(d);
        *slow = slow_paths(d);
        r = o == OUTCOME_DENY                ? RES_FAIL
            : o == OUTCOME_WARN              ? RES_WARN
            : o == OUTCOME_PATCH && *slow    ? RES_WARN
            : o == OUTCOME_SKIPPED || it.pods[0].ignored ||
                    d->verdict == VERDICT_IGNORE
                ? RES_SKIP
                : RES_PASS;
        if (r == RES_SKIP)
            strbuf_printf(&m, "not judged: %s",
                          it.pods[0].ignored ? it.pods[0].ignored
                                             : "not a governed GPU pod");
        else if (o == OUTCOME_PATCH && *slow) {
            char *f = patch_fields(d);
            strbuf_printf(&m, "runs without what topogate adds at admission: "
                              "%s; recreate the job's pods (topogate "
                              "patches them when they are created)",
                          f ? f : "?");
            free(f);
        } else if (d->message && r == RES_FAIL)
            strbuf_printf(&m, "%s", d->message);
        else if (d->reason && *d->reason)
            strbuf_printf(&m, "%s%s%s", d->reason, d->fix ? "; " : "",
                          d->fix ? d->fix : "");
        else
            strbuf_printf(&m, "%s", r == RES_PASS ? "GPU layout as the "
                                                    "policy wants it"
                                                  : "see topogate audit");
        *message = m.failed ? NULL : strbuf_take(&m);
    }
    audit_item_free(&it);
    cJSON_Delete(obj);
    return r;
}

static void
judge_workload(struct liveaudit *la, struct live_wl *w)
{
    enum result worst = RES_SKIP;
    char *message = NULL;
    unsigned slow = 0;
    long gpus = 0, slow_gpus = 0;
    const char *rule;
    bool changed;

    for (struct pod *p = w->pods; p; p = p->next) {
        unsigned ps;
        char *msg;
        enum result r = judge_pod(la->s, la->v, p->text, &ps, &msg);
        gpus += p->gpus;
        if (ps) {
            slow |= ps;
            slow_gpus += p->gpus;
        }
        if (r > worst || message == NULL) {
            worst = r > worst ? r : worst;
            if (r == worst) {
                free(message);
                message = msg;
                msg = NULL;
            }
        }
        free(msg);
    }
    rule = slow & (1u << SLOW_NVLINK) ? slow_rule[SLOW_NVLINK]
           : slow & (1u << SLOW_NICS) ? slow_rule[SLOW_NICS]
           : slow & (1u << SLOW_SHM)  ? slow_rule[SLOW_SHM]
                                      : "gpu-layout";
    changed = w->rule == NULL || worst != w->result ||
              strcmp(w->rule, rule) != 0 ||
              strcmp(w->message ? w->message : "", message ? message : "") !=
                  0 ||
              gpus != w->gpus || slow_gpus != w->slow_gpus;
    if (changed) {
        if (w->rule == NULL || worst != w->result ||
            strcmp(w->message ? w->message : "", message ? message : ""))
            w->since = wall_s();
        free(w->rule);
        free(w->message);
        w->rule = strdup(rule);
        w->message = message;
        message = NULL;
        w->result = worst;
        w->gpus = gpus;
        w->slow_gpus = slow_gpus;
        w->ns->dirty = true;
        la->metrics_dirty = true;
    }
    w->slow = slow;
    free(message);
    w->dirty = false;
}

/* One Event from the budget: a burst, then one per interval. */
static bool
event_budget(struct liveaudit *la, uint64_t now)
{
    while (la->tokens < EVENT_BURST && now >= la->token_ms) {
        la->tokens++;
        la->token_ms += EVENT_EVERY_MS;
    }
    if (la->tokens == 0)
        return false;
    if (la->tokens == EVENT_BURST)
        la->token_ms = now + EVENT_EVERY_MS;
    la->tokens--;
    return true;
}

/* Events for slow paths found and not told yet, as the budget allows. */
static void
send_events(struct liveaudit *la, struct live_wl *w, uint64_t now)
{
    char name[256], ts[32];
    time_t t = time(NULL);
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    for (int k = 0; k < SLOWS; k++) {
        cJSON *c, *e, *m, *io, *src;
        if (!(w->slow & (1u << k)) || (w->evented & (1u << k)))
            continue;
        if (!event_budget(la, now)) {
            la->events_limited++;
            la->metrics_dirty = true;
            return; /* the next tick tries again */
        }
        w->evented |= 1u << k;
        event_name(w, (enum slow)k, name, sizeof(name));
        c = cmd_new("event", w->ns->e.key);
        e = cJSON_AddObjectToObject(c, "body");
        m = cJSON_AddObjectToObject(e, "metadata");
        cJSON_AddStringToObject(m, "name", name);
        cJSON_AddStringToObject(
            cJSON_AddObjectToObject(m, "labels"), LIVE_MANAGED_BY, "topogate");
        io = cJSON_AddObjectToObject(e, "involvedObject");
        cJSON_AddStringToObject(io, "apiVersion", w->api_version);
        cJSON_AddStringToObject(io, "kind", w->kind);
        cJSON_AddStringToObject(io, "name", w->name);
        cJSON_AddStringToObject(io, "namespace", w->ns->e.key);
        if (w->uid)
            cJSON_AddStringToObject(io, "uid", w->uid);
        cJSON_AddStringToObject(e, "reason", slow_reason[k]);
        cJSON_AddStringToObject(e, "message",
                                w->message ? w->message : slow_rule[k]);
        cJSON_AddStringToObject(e, "type", "Warning");
        src = cJSON_AddObjectToObject(e, "source");
        cJSON_AddStringToObject(src, "component", "topogate");
        cJSON_AddStringToObject(e, "firstTimestamp", ts);
        cJSON_AddStringToObject(e, "lastTimestamp", ts);
        cJSON_AddNumberToObject(e, "count", 1);
        queue_cmd(la, c);
    }
}

static int
by_result_then_name(const void *a, const void *b)
{
    const struct live_wl *x = *(struct live_wl *const *)a;
    const struct live_wl *y = *(struct live_wl *const *)b;

    if (x->result != y->result)
        return x->result > y->result ? -1 : 1;
    return strcmp(x->e.key, y->e.key);
}

/* A namespace's report, as a body for the helper's "report". */
static cJSON *
report_body(const struct nsrep *n)
{
    struct live_wl **ws = calloc(n->n_workloads ? n->n_workloads : 1,
                                  sizeof(*ws));
    cJSON *r = cJSON_CreateObject(), *results, *sum;
    long count[4] = {0};
    size_t k = 0;

    if (ws == NULL || r == NULL) {
        free(ws);
        cJSON_Delete(r);
        return NULL;
    }
    for (struct live_wl *w = n->workloads; w; w = w->next)
        if (w->rule != NULL)
            ws[k++] = w;
    qsort(ws, k, sizeof(*ws), by_result_then_name);
    cJSON_AddObjectToObject(r, "metadata");
    results = cJSON_AddArrayToObject(r, "results");
    for (size_t i = 0; i < k; i++) {
        const struct live_wl *w = ws[i];
        cJSON *res, *ref, *props, *refs, *t;
        char num[32];
        count[w->result]++;
        if (i >= RESULTS_MAX)
            continue;
        res = cJSON_CreateObject();
        cJSON_AddStringToObject(res, "policy", "topogate");
        cJSON_AddStringToObject(res, "rule", w->rule);
        cJSON_AddStringToObject(res, "result", result_name[w->result]);
        cJSON_AddStringToObject(res, "message", w->message ? w->message : "");
        cJSON_AddStringToObject(res, "source", "topogate");
        cJSON_AddStringToObject(res, "category", "GPU layout");
        cJSON_AddStringToObject(res, "severity",
                                w->result == RES_FAIL   ? "high"
                                : w->result == RES_WARN ? "medium"
                                                        : "info");
        cJSON_AddBoolToObject(res, "scored", true);
        t = cJSON_AddObjectToObject(res, "timestamp");
        cJSON_AddNumberToObject(t, "seconds", (double)w->since);
        cJSON_AddNumberToObject(t, "nanos", 0);
        refs = cJSON_AddArrayToObject(res, "resources");
        ref = cJSON_CreateObject();
        cJSON_AddStringToObject(ref, "apiVersion", w->api_version);
        cJSON_AddStringToObject(ref, "kind", w->kind);
        cJSON_AddStringToObject(ref, "name", w->name);
        cJSON_AddStringToObject(ref, "namespace", n->e.key);
        if (w->uid)
            cJSON_AddStringToObject(ref, "uid", w->uid);
        cJSON_AddItemToArray(refs, ref);
        props = cJSON_AddObjectToObject(res, "properties");
        snprintf(num, sizeof(num), "%zu", w->n_pods);
        cJSON_AddStringToObject(props, "pods", num);
        snprintf(num, sizeof(num), "%ld", w->gpus);
        cJSON_AddStringToObject(props, "gpus", num);
        snprintf(num, sizeof(num), "%ld", w->slow_gpus);
        cJSON_AddStringToObject(props, "slowPathGPUs", num);
        cJSON_AddStringToObject(props, "selectedBy", w->label);
        cJSON_AddItemToArray(results, res);
    }
    sum = cJSON_AddObjectToObject(r, "summary");
    cJSON_AddNumberToObject(sum, "pass", (double)count[RES_PASS]);
    cJSON_AddNumberToObject(sum, "fail", (double)count[RES_FAIL]);
    cJSON_AddNumberToObject(sum, "warn", (double)count[RES_WARN]);
    cJSON_AddNumberToObject(sum, "error", 0);
    cJSON_AddNumberToObject(sum, "skip", (double)count[RES_SKIP]);
    free(ws);
    return r;
}

static void
write_report(struct liveaudit *la, struct nsrep *n, uint64_t now)
{
    cJSON *body, *c;
    char *text;

    if (n->retry_ms > now)
        return; /* a write failed: not before then */
    n->retry_ms = 0;
    n->dirty = false;
    if (n->n_workloads == 0) {
        if (n->exists || n->sent != NULL) {
            queue_cmd(la, cmd_new("unreport", n->e.key));
            free(n->sent);
            n->sent = NULL;
            n->exists = false; /* the answer (or the watch) says more */
        }
        ns_maybe_free(la, n);
        return;
    }
    if ((body = report_body(n)) == NULL)
        return;
    if ((text = cJSON_PrintUnformatted(body)) == NULL ||
        (n->sent != NULL && strcmp(n->sent, text) == 0)) {
        free(text);
        cJSON_Delete(body);
        return;
    }
    free(n->sent);
    n->sent = text;
    c = cmd_new("report", n->e.key);
    cJSON_AddItemToObject(c, "body", body);
    queue_cmd(la, c);
}

/* --- metrics ------------------------------------------------------------ */

static void
render_metrics(struct liveaudit *la)
{
    struct strbuf b = {0};
    long all_gpus[SLOWS] = {0}, all_jobs[SLOWS] = {0};
    size_t named = 0;

    strbuf_puts(&b, "# HELP topogate_liveaudit_fragmented_gpus GPUs of "
                    "running pods on a slow path now (live audit), by "
                    "namespace and reason.\n"
                    "# TYPE topogate_liveaudit_fragmented_gpus gauge\n");
    struct strbuf jobs = {0};
    strbuf_puts(&jobs, "# HELP topogate_liveaudit_fragmented_jobs Running "
                       "workloads on a slow path now (live audit), by "
                       "namespace and reason.\n"
                       "# TYPE topogate_liveaudit_fragmented_jobs gauge\n");
    long other_gpus[SLOWS] = {0}, other_jobs[SLOWS] = {0};
    MAP_EACH(&la->ns, e)
    {
        struct nsrep *n = (struct nsrep *)e;
        long g[SLOWS] = {0}, j[SLOWS] = {0};
        bool any = false;
        for (struct live_wl *w = n->workloads; w; w = w->next)
            for (int k = 0; k < SLOWS; k++)
                if (w->slow & (1u << k)) {
                    g[k] += w->slow_gpus;
                    j[k]++;
                    any = true;
                }
        if (!any)
            continue;
        for (int k = 0; k < SLOWS; k++) {
            all_gpus[k] += g[k];
            all_jobs[k] += j[k];
            if (named >= SERIES_NS_MAX) {
                other_gpus[k] += g[k];
                other_jobs[k] += j[k];
            } else if (j[k]) {
                strbuf_printf(&b,
                              "topogate_liveaudit_fragmented_gpus{namespace="
                              "\"%s\",reason=\"%s\"} %ld\n",
                              n->e.key, slow_label[k], g[k]);
                strbuf_printf(&jobs,
                              "topogate_liveaudit_fragmented_jobs{namespace="
                              "\"%s\",reason=\"%s\"} %ld\n",
                              n->e.key, slow_label[k], j[k]);
            }
        }
        named++;
    }
    for (int k = 0; k < SLOWS; k++)
        if (other_jobs[k]) {
            strbuf_printf(&b,
                          "topogate_liveaudit_fragmented_gpus{namespace="
                          "\"(other)\",reason=\"%s\"} %ld\n",
                          slow_label[k], other_gpus[k]);
            strbuf_printf(&jobs,
                          "topogate_liveaudit_fragmented_jobs{namespace="
                          "\"(other)\",reason=\"%s\"} %ld\n",
                          slow_label[k], other_jobs[k]);
        }
    strbuf_add(&b, jobs.buf ? jobs.buf : "", jobs.len);
    strbuf_free(&jobs);
    strbuf_puts(&b, "# HELP topogate_liveaudit_slow_path_gpus GPUs of "
                    "running pods on a slow path now, cluster-wide, by "
                    "reason (0 when none).\n"
                    "# TYPE topogate_liveaudit_slow_path_gpus gauge\n");
    for (int k = 0; k < SLOWS; k++)
        strbuf_printf(&b, "topogate_liveaudit_slow_path_gpus{reason=\"%s\"} "
                          "%ld\n",
                      slow_label[k], all_gpus[k]);
    strbuf_puts(&b, "# HELP topogate_liveaudit_slow_path_jobs Running "
                    "workloads on a slow path now, cluster-wide, by reason.\n"
                    "# TYPE topogate_liveaudit_slow_path_jobs gauge\n");
    for (int k = 0; k < SLOWS; k++)
        strbuf_printf(&b, "topogate_liveaudit_slow_path_jobs{reason=\"%s\"} "
                          "%ld\n",
                      slow_label[k], all_jobs[k]);
    strbuf_printf(&b,
                  "# HELP topogate_liveaudit_pods GPU pods of training "
                  "workloads running and judged.\n"
                  "# TYPE topogate_liveaudit_pods gauge\n"
                  "topogate_liveaudit_pods %zu\n"
                  "# HELP topogate_liveaudit_workloads Workloads those pods "
                  "belong to.\n"
                  "# TYPE topogate_liveaudit_workloads gauge\n"
                  "topogate_liveaudit_workloads %zu\n"
                  "# HELP topogate_liveaudit_synced 1 once every pod watch "
                  "has listed.\n"
                  "# TYPE topogate_liveaudit_synced gauge\n"
                  "topogate_liveaudit_synced %d\n"
                  "# HELP topogate_liveaudit_judge_seconds How long the last "
                  "judging of what changed took.\n"
                  "# TYPE topogate_liveaudit_judge_seconds gauge\n"
                  "topogate_liveaudit_judge_seconds %.6f\n",
                  la->pods.n, la->workloads.n, pods_synced(la) ? 1 : 0,
                  (double)la->judge_us / 1e6);
    strbuf_puts(&b, "# HELP topogate_liveaudit_policyreport_crd Whether "
                    "PolicyReports are written: the CRD served, not served, "
                    "or forbidden by RBAC (1 on the state now).\n"
                    "# TYPE topogate_liveaudit_policyreport_crd gauge\n");
    for (int c = 0; c < CRDS; c++)
        strbuf_printf(&b, "topogate_liveaudit_policyreport_crd{state=\"%s\"} "
                          "%d\n",
                      crd_name[c], la->crd == (enum crd)c);
    strbuf_puts(&b, "# HELP topogate_liveaudit_writes_total Writes the "
                    "helper did for the live audit, by what and HTTP status.\n"
                    "# TYPE topogate_liveaudit_writes_total counter\n");
    for (int w = 0; w < 4; w++)
        for (int c = 0; c < 6; c++)
            if (la->writes[w][c])
                strbuf_printf(&b,
                              "topogate_liveaudit_writes_total{what=\"%s\","
                              "code=\"%s\"} %llu\n",
                              write_what[w], write_code[c],
                              (unsigned long long)la->writes[w][c]);
    strbuf_printf(&b,
                  "# HELP topogate_liveaudit_events_limited_total Events "
                  "held back by the rate limit (sent later).\n"
                  "# TYPE topogate_liveaudit_events_limited_total counter\n"
                  "topogate_liveaudit_events_limited_total %llu\n"
                  "# HELP topogate_liveaudit_pods_dropped_total GPU pods not "
                  "kept: past the live audit's cap.\n"
                  "# TYPE topogate_liveaudit_pods_dropped_total counter\n"
                  "topogate_liveaudit_pods_dropped_total %llu\n",
                  (unsigned long long)la->events_limited,
                  (unsigned long long)la->pods_dropped);
    if (!b.failed && la->metrics)
        metrics_set_extra(la->metrics, strbuf_take(&b));
    strbuf_free(&b);
}

/* --- the tick ------------------------------------------------------------ */

static void
flush_queue(struct liveaudit *la, int fd)
{
    while (fd >= 0 && la->queue_off < la->queue.len) {
        ssize_t n = write(fd, la->queue.buf + la->queue_off,
                          la->queue.len - la->queue_off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* full (EAGAIN) or gone: the next tick */
        la->queue_off += (size_t)n;
    }
    if (la->queue_off == la->queue.len && la->queue.len > 0) {
        strbuf_free(&la->queue);
        la->queue_off = 0;
    }
}

static uint64_t
mono_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void
liveaudit_tick(struct liveaudit *la, int fd, uint64_t now, bool view_synced)
{
    struct snapshot *s;
    struct view *v = NULL;
    bool writing;
    uint64_t t0;

    la->now_ms = now;
    if (now - la->judged_ms >= JUDGE_INTERVAL_MS) {
        la->judged_ms = now;
        t0 = mono_us();
        s = server_current(la->srv, &v);
        if (s != la->s || v != la->v) {
            snapshot_unref(la->s);
            view_unref(la->v);
            la->s = s;
            la->v = v;
            la->all_dirty = true;
        } else {
            snapshot_unref(s);
            view_unref(v);
        }
        bool judged = false;
        MAP_EACH(&la->workloads, e)
        {
            struct live_wl *w = (struct live_wl *)e;
            if (w->dirty || la->all_dirty) {
                judge_workload(la, w);
                judged = true;
            }
        }
        la->all_dirty = false;
        if (judged)
            la->judge_us = mono_us() - t0;
        /* Nothing is written before the pods are all listed: a report
         * or Event from half a list would be taken back a moment later. */
        writing = fd >= 0 && view_synced && pods_synced(la);
        if (writing) {
            MAP_EACH(&la->workloads, e)
            {
                send_events(la, (struct live_wl *)e, now);
            }
        }
        if (writing && la->crd == CRD_SERVED) {
            MAP_EACH(&la->ns, e)
            {
                struct nsrep *n = (struct nsrep *)e;
                if (n->dirty)
                    write_report(la, n, now);
            }
        }
        if (la->metrics_dirty) {
            render_metrics(la);
            la->metrics_dirty = false;
        }
    }
    flush_queue(la, fd);
}

/* --- start and stop -------------------------------------------------- */

struct liveaudit *
liveaudit_new(struct server *srv, struct metrics *m)
{
    struct liveaudit *la = calloc(1, sizeof(*la));

    if (la == NULL)
        return NULL;
    la->srv = srv;
    la->metrics = m;
    la->tokens = EVENT_BURST;
    la->metrics_dirty = true;
    render_metrics(la);
    return la;
}

void
liveaudit_free(struct liveaudit *la)
{
    if (la == NULL)
        return;
    MAP_EACH(&la->pods, e)
    {
        struct pod *p = (struct pod *)e;
        free(p->e.key);
        free(p->text);
        free(p);
    }
    MAP_EACH(&la->workloads, e)
    {
        struct live_wl *w = (struct live_wl *)e;
        free(w->e.key);
        free(w->label);
        free(w->name);
        free(w->api_version);
        free(w->kind);
        free(w->uid);
        free(w->rule);
        free(w->message);
        free(w);
    }
    MAP_EACH(&la->ns, e)
    {
        struct nsrep *n = (struct nsrep *)e;
        free(n->e.key);
        free(n->sent);
        free(n);
    }
    free(la->pods.b);
    free(la->workloads.b);
    free(la->ns.b);
    snapshot_unref(la->s);
    view_unref(la->v);
    strbuf_free(&la->queue);
    free(la);
}
