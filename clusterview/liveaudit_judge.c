/*
 * liveaudit_judge.c - a job of the live audit judged: each of its pods
 * through audit_object(), as `topogate audit` judges a Pod; the job's
 * result is its worst pod's, its slow paths those of any.
 */
#include <stdlib.h>
#include <string.h>

#include "clusterview/liveaudit_internal.h"
#include "policy/audit/audit.h"
#include "policy/decision.h"

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
        {"/hostIPC", "hostIPC"},  {"/volumes", "/dev/shm"},
        {"IPC_LOCK", "IPC_LOCK"}, {"efa", "EFA"},
        {"rdma~1", "RDMA NICs"},  {"/tolerations", "tolerations"},
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

/* One pod judged: its result, slow paths, message (owned) and GPUs
 * (*gpus, the pod's nvidia.com/gpu on entry, gets those of its DRA
 * claims as the view reads them, which may change with the view). */
static enum result
judge_pod(const struct snapshot *s, const struct view *v, const char *text,
          unsigned *slow, char **message, long *gpus)
{
    cJSON *obj = cJSON_Parse(text);
    struct audit_item it;
    enum result r = RES_SKIP;
    struct strbuf m = {0};

    *slow = 0;
    *message = NULL;
    if (obj == NULL)
        return RES_SKIP;
    if (audit_pod_claims(obj)) {
        long n = audit_pod_gpus(v, obj);
        *gpus = n > *gpus ? n : *gpus;
    }
    if (audit_object(s, v, obj, NULL, &it) == 0 && it.n_pods == 1) {
        const struct decision *d = &it.pods[0].d;
        enum audit_outcome o = outcome_of(d);
        *slow = slow_paths(d);
        r = o == OUTCOME_DENY             ? RES_FAIL
            : o == OUTCOME_WARN           ? RES_WARN
            : o == OUTCOME_PATCH && *slow ? RES_WARN
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
            strbuf_printf(&m,
                          "runs without what topogate adds at admission: "
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
            strbuf_printf(&m, "%s",
                          r == RES_PASS ? "GPU layout as the "
                                          "policy wants it"
                                        : "see topogate audit");
        *message = m.failed ? NULL : strbuf_take(&m);
    }
    audit_item_free(&it);
    cJSON_Delete(obj);
    return r;
}

void
live_judge_workload(struct liveaudit *la, struct live_wl *w)
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
        long pg = p->gpus;
        enum result r = judge_pod(la->s, la->v, p->text, &ps, &msg, &pg);
        gpus += pg;
        if (ps) {
            slow |= ps;
            slow_gpus += pg;
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
    rule = slow & (1u << SLOW_NVLINK) ? live_slow_rule[SLOW_NVLINK]
           : slow & (1u << SLOW_NICS) ? live_slow_rule[SLOW_NICS]
           : slow & (1u << SLOW_SHM)  ? live_slow_rule[SLOW_SHM]
                                      : "gpu-layout";
    changed =
        w->rule == NULL || worst != w->result || strcmp(w->rule, rule) != 0 ||
        strcmp(w->message ? w->message : "", message ? message : "") != 0 ||
        gpus != w->gpus || slow_gpus != w->slow_gpus || slow != w->slow;
    if (changed) {
        if (w->rule == NULL || worst != w->result ||
            strcmp(w->message ? w->message : "", message ? message : ""))
            w->since = live_wall_s();
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
