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

#include "clusterview/liveaudit_internal.h"
#include "lib/log.h"
#include "policy/view/view.h"
#include "policy/table/snapshot.h"
#include "webhook/metrics.h"
#include "webhook/server.h"

const char *const live_slow_label[SLOWS] = {"nvlink_split", "missing_nics",
                                            "missing_shm"};
const char *const live_slow_rule[SLOWS] = {"fragmented-layout", "missing-nics",
                                           "missing-shm"};
const char *const live_slow_reason[SLOWS] = {
    "FragmentedLayout", "MissingRDMANICs", "MissingDevShm"};
const char *const live_result_name[] = {"skip", "pass", "warn", "fail"};
const char *const live_crd_name[CRDS] = {"unknown", "served", "not_served",
                                         "forbidden"};
const char *const live_write_what[4] = {"report", "unreport", "event",
                                        "unevent"};
const char *const live_write_code[6] = {"2xx", "403",   "404",
                                        "409", "other", "none"};

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

char *
live_xstrdup(const char *s)
{
    return strdup(s ? s : "");
}

int64_t
live_wall_s(void)
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

/* The next report is written whatever it says. */
void
live_ns_forget_sent(struct nsrep *n)
{
    free(n->sent);
    n->sent = NULL;
}

/* A namespace with no workload and no report of ours is forgotten. */
void
live_ns_maybe_free(struct liveaudit *la, struct nsrep *n)
{
    if (n->n_workloads > 0 || n->exists || n->sent != NULL)
        return;
    map_del(&la->ns, &n->e);
    free(n->e.key);
    free(n);
}

void
live_queue_cmd(struct liveaudit *la, cJSON *cmd)
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

cJSON *
live_cmd_new(const char *op, const char *ns)
{
    cJSON *c = cJSON_CreateObject();

    cJSON_AddStringToObject(c, "op", op);
    cJSON_AddStringToObject(c, "ns", ns);
    return c;
}

/* The Event of a workload and reason: one name, so a second create is
 * a 409 and nothing more. */
void
live_event_name(const struct live_wl *w, enum slow k, char *out, size_t len)
{
    snprintf(out, len, "%.200s.topogate-%s", w->name, live_slow_rule[k]);
}

void
live_fixed_event_name(const struct live_wl *w, enum slow k, char *out,
                      size_t len)
{
    snprintf(out, len, "%.200s.topogate-%s-fixed", w->name, live_slow_rule[k]);
}

static void
workload_free(struct liveaudit *la, struct live_wl *w)
{
    struct nsrep *n = w->ns;
    char name[256];

    /* Its Events go with it. */
    for (int k = 0; k < SLOWS; k++)
        if (w->evented & (1u << k)) {
            cJSON *c = live_cmd_new("unevent", n->e.key);
            live_event_name(w, (enum slow)k, name, sizeof(name));
            cJSON_AddStringToObject(c, "name", name);
            live_queue_cmd(la, c);
            if (w->fixed & (1u << k)) {
                c = live_cmd_new("unevent", n->e.key);
                live_fixed_event_name(w, (enum slow)k, name, sizeof(name));
                cJSON_AddStringToObject(c, "name", name);
                live_queue_cmd(la, c);
            }
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
    live_ns_maybe_free(la, n);
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
    w->label = live_xstrdup(o->label);
    w->name = live_xstrdup(o->name);
    w->api_version = live_xstrdup(o->api_version);
    w->kind = live_xstrdup(o->kind);
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
        live_ns_forget_sent(n);
    }
    n->dirty = true;
    live_ns_maybe_free(la, n);
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
            live_ns_maybe_free(la, n);
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
        if (forget_sent)
            live_ns_forget_sent(n);
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
        if (strcmp(what, live_write_what[i]) == 0)
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
            live_ns_forget_sent(n);
            n->dirty = true;
            n->retry_ms = la->now_ms + RETRY_MS;
            if (code == 404)
                set_crd(la, CRD_NOT_SERVED);
            else if (code == 403)
                set_crd(la, CRD_FORBIDDEN);
        }
    } else if (wi == 1 && n != NULL && (ci == 0 || code == 404)) {
        n->exists = false;
        live_ns_maybe_free(la, n);
    }
}

/* --- lines ---------------------------------------------------------------- */

bool
live_pods_synced(const struct liveaudit *la)
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
    if (op == NULL || (ri = live_resource_index(res)) < 0 || ri >= LIVE_RES_MAX)
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
        if (synced && !reports && live_pods_synced(la))
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
                live_judge_workload(la, w);
                judged = true;
            }
        }
        la->all_dirty = false;
        if (judged)
            la->judge_us = mono_us() - t0;
        /* Nothing is written before the pods are all listed: a report
         * or Event from half a list would be taken back a moment later. */
        writing = fd >= 0 && view_synced && live_pods_synced(la);
        if (writing) {
            MAP_EACH(&la->workloads, e)
            {
                live_send_events(la, (struct live_wl *)e, now);
            }
        }
        if (writing && la->crd == CRD_SERVED) {
            MAP_EACH(&la->ns, e)
            {
                struct nsrep *n = (struct nsrep *)e;
                if (n->dirty)
                    live_write_report(la, n, now);
            }
        }
        if (la->metrics_dirty) {
            live_render_metrics(la);
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
    live_render_metrics(la);
    return la;
}

void
liveaudit_free(struct liveaudit *la)
{
    if (la == NULL)
        return;
    /* Its series go with it (a live audit that never started). */
    if (la->metrics)
        metrics_set_extra(la->metrics, NULL);
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
