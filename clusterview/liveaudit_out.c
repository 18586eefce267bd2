/*
 * liveaudit_out.c - what the live audit says: Events (once per job and
 * reason, rate limited), a namespace's PolicyReport body and its write,
 * and the gauges' exposition text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clusterview/liveaudit_internal.h"
#include "webhook/metrics.h"

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

/* The "event" command of one core v1 Event on w's job. */
static cJSON *
event_cmd(const struct live_wl *w, const char *name, const char *type,
          const char *reason, const char *message, const char *ts)
{
    cJSON *c = live_cmd_new("event", w->ns->e.key), *e, *m, *io, *src;

    e = cJSON_AddObjectToObject(c, "body");
    m = cJSON_AddObjectToObject(e, "metadata");
    cJSON_AddStringToObject(m, "name", name);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "labels"),
                            LIVE_MANAGED_BY, "topogate");
    io = cJSON_AddObjectToObject(e, "involvedObject");
    cJSON_AddStringToObject(io, "apiVersion", w->api_version);
    cJSON_AddStringToObject(io, "kind", w->kind);
    cJSON_AddStringToObject(io, "name", w->name);
    cJSON_AddStringToObject(io, "namespace", w->ns->e.key);
    if (w->uid)
        cJSON_AddStringToObject(io, "uid", w->uid);
    cJSON_AddStringToObject(e, "reason", reason);
    cJSON_AddStringToObject(e, "message", message);
    cJSON_AddStringToObject(e, "type", type);
    src = cJSON_AddObjectToObject(e, "source");
    cJSON_AddStringToObject(src, "component", "topogate");
    cJSON_AddStringToObject(e, "firstTimestamp", ts);
    cJSON_AddStringToObject(e, "lastTimestamp", ts);
    cJSON_AddNumberToObject(e, "count", 1);
    return c;
}

/* Takes one Event from the budget, or counts (once per job and reason)
 * that the limit held it back: false then, and the next tick tries
 * again. */
static bool
event_allowed(struct liveaudit *la, struct live_wl *w, enum slow k,
              uint64_t now)
{
    if (event_budget(la, now))
        return true;
    if (!(w->held & (1u << k))) {
        w->held |= 1u << k;
        la->events_limited++;
        la->metrics_dirty = true;
    }
    return false;
}

/*
 * Events for slow paths found and not told yet, as the budget allows: a
 * Warning when a running job is found on one; a Normal "...Fixed" when a
 * job told of one is judged again and is no longer on it (the Warning
 * stays, as the record of what ran: Events are history, and the newer
 * Normal one says it is over). Found on it again, the Normal Event is
 * deleted, and the Warning says what is so. All are deleted when the
 * job goes (workload_free()).
 */
void
live_send_events(struct liveaudit *la, struct live_wl *w, uint64_t now)
{
    char name[256], reason[64], message[1100], ts[32];
    time_t t = time(NULL);
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
    for (int k = 0; k < SLOWS; k++) {
        unsigned bit = 1u << k;
        bool on = w->slow & bit;
        if (on && (w->fixed & bit)) {
            cJSON *c = live_cmd_new("unevent", w->ns->e.key);
            live_fixed_event_name(w, (enum slow)k, name, sizeof(name));
            cJSON_AddStringToObject(c, "name", name);
            live_queue_cmd(la, c);
            w->fixed &= ~bit;
        }
        if (on && !(w->evented & bit)) {
            if (!event_allowed(la, w, (enum slow)k, now))
                return;
            w->evented |= bit;
            live_event_name(w, (enum slow)k, name, sizeof(name));
            live_queue_cmd(
                la, event_cmd(w, name, "Warning", live_slow_reason[k],
                              w->message ? w->message : live_slow_rule[k], ts));
        } else if (!on && (w->evented & bit) && !(w->fixed & bit) &&
                   w->rule != NULL && w->result != RES_SKIP) {
            if (!event_allowed(la, w, (enum slow)k, now))
                return;
            w->fixed |= bit;
            live_fixed_event_name(w, (enum slow)k, name, sizeof(name));
            snprintf(reason, sizeof(reason), "%sFixed", live_slow_reason[k]);
            snprintf(message, sizeof(message), "no longer %s: %.1000s",
                     live_slow_rule[k],
                     w->message ? w->message : live_result_name[w->result]);
            live_queue_cmd(la,
                           event_cmd(w, name, "Normal", reason, message, ts));
        }
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
    struct live_wl **ws =
        calloc(n->n_workloads ? n->n_workloads : 1, sizeof(*ws));
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
        cJSON_AddStringToObject(res, "result", live_result_name[w->result]);
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

void
live_write_report(struct liveaudit *la, struct nsrep *n, uint64_t now)
{
    cJSON *body, *c;
    char *text;

    if (n->retry_ms > now)
        return; /* a write failed: not before then */
    n->retry_ms = 0;
    n->dirty = false;
    if (n->n_workloads == 0) {
        if (n->exists || n->sent != NULL) {
            live_queue_cmd(la, live_cmd_new("unreport", n->e.key));
            live_ns_forget_sent(n);
            n->exists = false; /* the answer (or the watch) says more */
        }
        live_ns_maybe_free(la, n);
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
    c = live_cmd_new("report", n->e.key);
    cJSON_AddItemToObject(c, "body", body);
    live_queue_cmd(la, c);
}

/* --- metrics ------------------------------------------------------------ */

void
live_render_metrics(struct liveaudit *la)
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
                              n->e.key, live_slow_label[k], g[k]);
                strbuf_printf(&jobs,
                              "topogate_liveaudit_fragmented_jobs{namespace="
                              "\"%s\",reason=\"%s\"} %ld\n",
                              n->e.key, live_slow_label[k], j[k]);
            }
        }
        named++;
    }
    for (int k = 0; k < SLOWS; k++)
        if (other_jobs[k]) {
            strbuf_printf(&b,
                          "topogate_liveaudit_fragmented_gpus{namespace="
                          "\"(other)\",reason=\"%s\"} %ld\n",
                          live_slow_label[k], other_gpus[k]);
            strbuf_printf(&jobs,
                          "topogate_liveaudit_fragmented_jobs{namespace="
                          "\"(other)\",reason=\"%s\"} %ld\n",
                          live_slow_label[k], other_jobs[k]);
        }
    strbuf_add(&b, jobs.buf ? jobs.buf : "", jobs.len);
    strbuf_free(&jobs);
    strbuf_puts(&b, "# HELP topogate_liveaudit_slow_path_gpus GPUs of "
                    "running pods on a slow path now, cluster-wide, by "
                    "reason (0 when none).\n"
                    "# TYPE topogate_liveaudit_slow_path_gpus gauge\n");
    for (int k = 0; k < SLOWS; k++)
        strbuf_printf(&b,
                      "topogate_liveaudit_slow_path_gpus{reason=\"%s\"} "
                      "%ld\n",
                      live_slow_label[k], all_gpus[k]);
    strbuf_puts(&b, "# HELP topogate_liveaudit_slow_path_jobs Running "
                    "workloads on a slow path now, cluster-wide, by reason.\n"
                    "# TYPE topogate_liveaudit_slow_path_jobs gauge\n");
    for (int k = 0; k < SLOWS; k++)
        strbuf_printf(&b,
                      "topogate_liveaudit_slow_path_jobs{reason=\"%s\"} "
                      "%ld\n",
                      live_slow_label[k], all_jobs[k]);
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
                  la->pods.n, la->workloads.n, live_pods_synced(la) ? 1 : 0,
                  (double)la->judge_us / 1e6);
    strbuf_puts(&b, "# HELP topogate_liveaudit_policyreport_crd Whether "
                    "PolicyReports are written: the CRD served, not served, "
                    "or forbidden by RBAC (1 on the state now).\n"
                    "# TYPE topogate_liveaudit_policyreport_crd gauge\n");
    for (int c = 0; c < CRDS; c++)
        strbuf_printf(&b,
                      "topogate_liveaudit_policyreport_crd{state=\"%s\"} "
                      "%d\n",
                      live_crd_name[c], la->crd == (enum crd)c);
    strbuf_puts(&b, "# HELP topogate_liveaudit_writes_total Writes the "
                    "helper did for the live audit, by what and HTTP status.\n"
                    "# TYPE topogate_liveaudit_writes_total counter\n");
    for (int w = 0; w < 4; w++)
        for (int c = 0; c < 6; c++)
            if (la->writes[w][c])
                strbuf_printf(&b,
                              "topogate_liveaudit_writes_total{what=\"%s\","
                              "code=\"%s\"} %llu\n",
                              live_write_what[w], live_write_code[c],
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
