/*
 * decide.c - the decision: which pods are governed, which layouts are
 * refused, and what the rest get patched with. See DESIGN.md "Decision".
 */
#include "policy/decide.h"

#include <stdlib.h>
#include <string.h>

#include "policy/jobs/job.h"
#include "policy/judge.h"
#include "policy/k8s/match.h"
#include "policy/k8s/labels.h"
#include "policy/pod/mutate.h"
#include "policy/pod/claims.h"
#include "policy/pod/nics.h"
#include "policy/pod/nodefacts.h"
#include "policy/pod/numafit.h"
#include "policy/pod/placement.h"
#include "base/strbuf.h"
#include "policy/k8s/pod.h"
#include "policy/k8s/quantity.h"
#include "policy/kinds/workload.h"
#include "policy/pod/zones.h"

/* Audit mode's account of the patch it did not make. */
static int
summarise_ops(struct decision *d)
{
    char *fields = decision_fields(d);
    int rc;

    if (fields == NULL)
        return -1;
    rc = decision_warn(d, "audit: would patch %zu field%s (%s)", d->n_ops,
                       d->n_ops == 1 ? "" : "s", fields);
    free(fields);
    return rc;
}

/*
 * The ops as JSON Patch text, for the log line and the audit annotation:
 * whole ops only, as many as fit in DECISION_WOULD_MAX, then how many
 * more there were. NULL out of memory.
 */
static char *
would_patch(const struct decision *d)
{
    struct strbuf sb = {0};
    struct jsonout op = {0}; /* one op's text at a time, one buffer */
    size_t i;

    strbuf_puts(&sb, "[");
    for (i = 0; i < d->n_ops; i++) {
        jsonout_clear(&op);
        decision_print_op(&op, &d->ops[i]);
        if (op.failed || sb.len + op.len + 32 > DECISION_WOULD_MAX)
            break;
        if (i > 0)
            strbuf_puts(&sb, ",");
        strbuf_add(&sb, op.buf, op.len);
    }
    jsonout_free(&op);
    if (i < d->n_ops)
        strbuf_printf(&sb, "%s\"... %zu more ops\"", i ? "," : "",
                      d->n_ops - i);
    strbuf_puts(&sb, "]");
    return strbuf_take(&sb);
}

/* Audit mode: say what would have happened, change nothing. */
static int
to_audit(struct decision *d)
{
    if (d->n_ops > 0 && (summarise_ops(d) < 0 ||
                         (d->would_patch = would_patch(d)) == NULL))
        return -1;
    decision_drop_ops(d);
    return 0;
}

/*
 * What the candidates rest on: the placement's own evidence, or, where no
 * row is known, the policy that asks for a known one (unknown: deny).
 */
static enum evidence
evidence_of(const struct snapshot *s, const struct placement *p)
{
    if (placement_known(p))
        return p->evidence;
    return s->unknown == UNKNOWN_DENY ? EVIDENCE_POLICY : EVIDENCE_NONE;
}

/*
 * The policy's gkeNetworks entry that every candidate type shares (the
 * view's rows keep their type's name), or NULL: networks are never
 * guessed for a pod that may land on types named otherwise.
 */
static const struct gke_networks *
gke_networks_agree(const struct snapshot *s, const char *ns,
                   const struct placement *p)
{
    const struct gke_networks *g = NULL;

    for (size_t i = 0; i < p->n_types; i++) {
        const struct gke_networks *one =
            snapshot_gke_networks(s, ns, p->types[i]->name);
        if (one == NULL || (g && one != g))
            return NULL;
        g = one;
    }
    return g;
}

/*
 * What the labels of the candidate nodes say that the table cannot
 * (nodefacts.h), for a pod of a multi-pod job: only its traffic leaves
 * the node. 0, or -1 out of memory.
 */
static int
warn_node_facts(const struct placement *p, const struct workload *w,
                struct decision *d)
{
    if (w->pods < 2)
        return 0;
    for (size_t i = 0; i < p->n_rows; i++)
        if (p->rows[i].kind &&
            nodefacts_kind(p->rows[i].kind, &p->rows[i].row, decision_say,
                           d) < 0)
            return -1;
    return 0;
}

/*
 * What kubelet's Topology Manager on the candidate nodes does with the
 * pod as admitted, filled GPUs added (numafit.h): for any pod, as a
 * one-pod job fails there too. 0, or -1 out of memory.
 */
static int
warn_numa(const struct placement *p, const cJSON *pod, long filled,
          struct decision *d)
{
    for (size_t i = 0; i < p->n_numa; i++)
        if (numafit_pod(p->numa[i].kind, p->numa[i].name, pod, filled,
                        decision_say, d) < 0)
            return -1;
    return 0;
}

/*
 * Where the nodes' RDMA NICs are DRA devices (DRANET, AWS's EFA DRA
 * driver), no NIC resource is the node's to add (nics.c): say whether
 * the pod's claims give it them. A one-pod job needs none.
 */
static int
dra_nics_note(const struct admission *req, const struct match *m,
              const struct workload *w, struct decision *d)
{
    long n = placement_dra_nics(req->view, m, w, req->namespace,
                                pod_label(req->object, LABEL_QUEUE_NAME));

    if (n <= 0 || w->pods < 2)
        return 0;
    if (w->claim_nics)
        return decision_warn(d,
                             "its DRA claims give it the nodes' RDMA NICs "
                             "(ResourceClaimTemplate '%s')",
                             w->claim_nics);
    return decision_warn(d,
                         "the nodes' %ld RDMA NICs are DRA devices and no "
                         "claim of this pod asks for them",
                         n);
}

/* The governed part: placement, judgement, mode, patch. */
static int
decide_governed(const struct snapshot *s, const struct admission *req,
                struct workload *w, struct decision *d)
{
    const cJSON *pod = req->object;
    enum mode mode = snapshot_mode_for(s, req->namespace);
    const struct inject *in = snapshot_inject_for(s, req->namespace);
    struct placement p;
    struct finding worst = {0};
    struct target t;
    struct match m;
    char candidates[256];
    enum verdict v;
    enum evidence ev;
    long filled = 0; /* GPUs topogate.io/whole-node adds */
    bool agreed;
    int rc = -1;

    /* A framework's pods go no further than its switch says. */
    if (w->owner == OWNER_FRAMEWORK)
        mode = snapshot_framework_mode(s, req->namespace, w->framework);
    if (match_parse(json_get(pod, "spec"), &m) < 0)
        return -1;
    placement_read(s, &m, w->gpus, &p);
    placement_pin_from_view(s, req->view, &m, w, req->namespace,
                            pod_label(pod, LABEL_QUEUE_NAME), &p);
    if (!p.pinned && req->view)
        placement_from_view(s, req->view, &m, w, req->namespace,
                            pod_label(pod, LABEL_QUEUE_NAME), &p);
    if (!p.pinned && !placement_known(&p))
        placement_clique(s, &m, json_get(pod, "spec"), w, &p);
    placement_numa(s, req->view, &m, w, req->namespace,
                   pod_label(pod, LABEL_QUEUE_NAME), &p);
    agreed = placement_known(&p);
    d->known_by = evidence_name(agreed ? p.evidence : EVIDENCE_NONE);
    if (agreed) {
        target_agree(p.types, p.n_types, &t);
        t.gke_net = gke_networks_agree(s, req->namespace, &p);
        /* allocationMode All: every GPU of the node it lands on. */
        if (w->claim_all && t.gpus > 0) {
            w->gpus = t.gpus;
            if (w->procs_from_gpus)
                w->procs = w->gpus;
        }
        /* NICs only where every node it can land on has them (issue 43). */
        nics_narrow(&t, pod,
                    placement_nic_fewest(req->view, &m, w, req->namespace,
                                         pod_label(pod, LABEL_QUEUE_NAME),
                                         t.nic));
        d->instance_type = p.types[0]->name;
        /* An explicit opt-in: fill the node before judging the layout. */
        const char *whole = pod_annotation(pod, ANNOTATION_WHOLE_NODE);
        filled = w->gpus;
        if (whole && strcmp(whole, "true") == 0 &&
            mutate_fill_gpus(pod, w, &t, d) < 0)
            goto out;
        filled = w->gpus - filled;
    } else {
        d->instance_type = "unknown";
    }
    judge_all(s, w, &p, &worst);
    d->finding = worst.sev != SEV_OK;
    placement_candidates(&p, candidates, sizeof(candidates));
    if (!in->zone_affinity &&
        zones_warn(&p.zones, w->pods, json_get(pod, "spec"), d) < 0)
        goto out;
    if (dra_nics_note(req, &m, w, d) < 0)
        goto out;
    /* GPUs the view reads from claims it cannot fully read: a guess. */
    ev = w->claim_weak ? EVIDENCE_NONE : evidence_of(s, &p);
    if (worst.sev != SEV_OK && w->claim_weak &&
        (decision_warn(d, "DRA claims: %s", w->claim_why) < 0 ||
         decision_warn(d, "the pod's GPUs are a guess: not refused") < 0))
        goto out;
    v = judge_verdict(mode, worst.sev, ev, false, NULL);
    if (v == VERDICT_DENY) {
        /* Nothing is patched on a denied pod. */
        decision_drop_ops(d);
        d->verdict = d->judged = VERDICT_DENY;
        if (finding_deny(d, &worst, candidates[0] ? candidates : NULL) == 0 &&
            finding_explain(d, &worst) == 0)
            rc = 0;
        goto out;
    }
    if (worst.sev != SEV_OK && finding_warn(d, &worst) < 0)
        goto out;
    /* Hardware known from a ComputeDomain alone is always explained. */
    if ((worst.sev != SEV_OK || p.evidence == EVIDENCE_CLIQUE) &&
        candidates[0] && decision_warn(d, "%s", candidates) < 0)
        goto out;
    if (agreed && !worst.unschedulable &&
        mutate_pod(pod, &m, w, &t, in, s->override_user, d) < 0)
        goto out;
    if (warn_node_facts(&p, w, d) < 0 || warn_numa(&p, pod, filled, d) < 0)
        goto out;
    if (in->zone_affinity &&
        zones_patch(&p.zones, w->pods, pod, d) < 0)
        goto out;
    d->verdict = judge_verdict(mode, worst.sev, ev, d->n_ops > 0, &d->judged);
    if (w->owner == OWNER_FRAMEWORK &&
        judge_framework_note(s, req->namespace, w->framework, d) < 0)
        goto out;
    if (worst.sev != SEV_OK
            ? finding_explain(d, &worst) < 0
            : decision_set_reason(d, d->n_ops ? "patched to the node's fast "
                                                "shape"
                                              : "already in the node's "
                                                "fast shape") < 0)
        goto out;
    if (mode == MODE_AUDIT && to_audit(d) < 0)
        goto out;
    rc = 0;
out:
    finding_free(&worst);
    match_free(&m);
    return rc;
}

int
decide(const struct snapshot *s, const struct admission *req,
       struct decision *d)
{
    const cJSON *pod = req->object;
    const char *skip;
    struct workload w;
    int rc;

    if (job_kind(req->group, req->kind))
        return decide_job(s, req, d);
    /* Only pods at creation: GPU and EFA limits cannot change later. */
    if (strcmp(req->kind, "Pod") != 0 || req->group[0] != '\0' ||
        strcmp(req->operation, "CREATE") != 0 || !cJSON_IsObject(pod))
        return 0;
    workload_read(pod, &w);
    claims_read(req->view, req->namespace, pod, &w);
    /* A null GPU count is a GPU the user meant to ask for; a claim the
     * view cannot read may be GPUs. */
    if (!w.any_gpu && !w.bad_value && !w.claim_unknown &&
        !(w.null_resource && strcmp(w.null_resource, RESOURCE_GPU) == 0))
        return 0;
    if (w.owner == OWNER_NONE || w.launcher ||
        (w.owner == OWNER_FRAMEWORK &&
         s->frameworks[w.framework] == FRAMEWORK_OFF))
        return 0;
    d->mode = mode_name(w.owner == OWNER_FRAMEWORK
                            ? snapshot_framework_mode(s, req->namespace,
                                                      w.framework)
                            : snapshot_mode_for(s, req->namespace));
    skip = pod_annotation(pod, ANNOTATION_SKIP);
    if ((rc = judge_opt_out(s, req->namespace, skip && strcmp(skip, "true") == 0,
                            d)) != 0)
        return rc < 0 ? -1 : 0;
    /* The apiserver rejects a bad quantity itself; say why we stand by. */
    if (w.bad_value) {
        char *value = json_text(w.bad_value);
        const char *why = quantity_count_problem(w.bad_value);
        rc = decision_warn(d,
                           "container '%s': %s %s %s; topogate did not check "
                           "this pod",
                           w.bad_container ? w.bad_container : "?",
                           w.bad_resource, value ? value : "?",
                           why ? why : "is not a count");
        free(value);
        d->verdict = d->judged = VERDICT_ALLOW;
        return rc < 0 ? rc
                      : decision_set_reason(d, "unreadable GPU or EFA count");
    }
    /* Null reads as absent: the request counts, and the user is told. */
    if (w.null_container && workload_warn_null(&w, d) < 0)
        return -1;
    if (!w.any_gpu && w.claim_unknown) {
        /* A review shows a claim's name alone: a guess, never a refusal. */
        d->verdict = d->judged = VERDICT_ALLOW;
        if (decision_warn(d, "DRA claim '%s': %s", w.claim_unknown,
                          w.claim_why) < 0 ||
            decision_warn(d, "its GPUs are not known: the layout is not "
                             "checked") < 0)
            return -1;
        return decision_set_reason(d, "GPUs of its DRA claims not known");
    }
    if (!w.any_gpu) {
        d->verdict = d->judged = VERDICT_ALLOW;
        return decision_set_reason(d, "GPU count is null");
    }
    return decide_governed(s, req, &w, d);
}
