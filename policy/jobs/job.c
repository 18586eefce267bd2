/*
 * job.c - see job.h. The job's pods are derived with expand(), pinned to
 * the policy's instance type for the job's runtime or namespace when they
 * pin none, and judged by the same rules as pods (judge.h), with the job's
 * own shape: its numNodes, replicas and processes per pod.
 */
#include "policy/jobs/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/kinds/expand.h"
#include "policy/kinds/kinds.h"
#include "policy/jobs/job_internal.h"
#include "policy/pod/claims.h"
#include "policy/judge.h"
#include "policy/k8s/match.h"
#include "policy/k8s/labels.h"
#include "policy/pod/mutate.h"
#include "policy/pod/numafit.h"
#include "policy/pod/placement.h"
#include "policy/k8s/pod.h"
#include "policy/kinds/podbuild.h"
#include "policy/jobs/repack.h"
#include "policy/pod/zones.h"

/* The rows of the table of kinds that say job_level (kinds.c). */
bool
job_kind(const char *group, const char *kind)
{
    return kinds_job(group, kind);
}

/* The row of the object itself, for its apiVersion; NULL: none. */
static const struct kind *
object_row(const struct admission *req)
{
    return kinds_object(req->group, json_string(req->object, "apiVersion"),
                        req->kind, NULL);
}

/* worst.type may point into p, which is the loop's: keep a copy. */
static void
keep_row(struct verdict_of_job *v, const struct placement *p)
{
    for (size_t i = 0; i < p->n_rows; i++) {
        if (v->worst.type != &p->rows[i].row)
            continue;
        v->row = p->rows[i];
        if (v->row.row.shm == p->rows[i].shm)
            v->row.row.shm = v->row.shm;
        v->worst.type = &v->row.row;
    }
}

void
job_workload(const struct expansion *e, const cJSON *pod, struct workload *w)
{
    workload_read(pod, w);
    w->owner = e->job.owner;
    w->has_master = e->job.has_master;
    w->elastic = e->job.elastic;
    w->per_node_launcher = e->job.per_node_launcher;
    w->groups_alone = e->job.groups_alone;
    if (e->job.nodes > 0) {
        w->pods = e->job.nodes;
        w->pods_known = true;
    }
    w->procs = e->job.procs > 0 ? e->job.procs : (w->gpus > 0 ? w->gpus : 1);
}

/* The pod's candidates from what it pins, else (view not NULL) from the
 * cluster view, else (last) from a ComputeDomain on gpu.clique nodes;
 * p's strings borrow from pod and the view. */
static int
place(const struct snapshot *s, const struct admission *req, const cJSON *pod,
      const struct workload *w, const struct view *view, bool last,
      struct placement *p)
{
    struct match m;

    if (match_parse(json_get(pod, "spec"), &m) < 0)
        return -1;
    placement_read(s, &m, w->gpus, p);
    /* The view tells a pinned type the table lacks, whichever step. */
    placement_pin_from_view(s, req->view, &m, w, req->namespace,
                            pod_label(req->object, LABEL_QUEUE_NAME), p);
    if (!p->pinned && view)
        placement_from_view(s, view, &m, w, req->namespace,
                            pod_label(req->object, LABEL_QUEUE_NAME), p);
    if (last && !p->pinned && !placement_known(p))
        placement_clique(s, &m, json_get(pod, "spec"), w, p);
    placement_numa(s, req->view, &m, w, req->namespace,
                   pod_label(req->object, LABEL_QUEUE_NAME), p);
    match_free(&m);
    return 0;
}

int
place_job_pod(const struct snapshot *s, const struct admission *req,
              const struct expansion *e, cJSON *pod,
              const struct workload *w, struct placement *p)
{
    const char *type;

    if (place(s, req, pod, w, NULL, false, p) < 0)
        return -1;
    if (p->pinned)
        return 0;
    if ((type = snapshot_job_type(s, req->namespace, e->job.runtime)) ==
        NULL)
        return place(s, req, pod, w, req->view, true, p);
    cJSON *sel = podbuild_object(podbuild_object(pod, "spec"), "nodeSelector");
    if (sel == NULL || !cJSON_AddStringToObject(sel, LABEL_INSTANCE_TYPE, type))
        return -1;
    if (place(s, req, pod, w, NULL, false, p) < 0)
        return -1;
    p->evidence = EVIDENCE_POLICY;
    return 0;
}

static int
judge_job(const struct snapshot *s, const struct admission *req,
          const struct expansion *e, struct verdict_of_job *v,
          struct decision *d)
{
    memset(v, 0, sizeof(*v));
    for (size_t i = 0; i < e->n_groups; i++) {
        cJSON *pod = e->groups[i].pod;
        const char *skip = pod_annotation(pod, ANNOTATION_SKIP);
        struct workload w;
        struct placement p;
        struct finding f;

        job_workload(e, pod, &w);
        claims_read(req->view, req->namespace, pod, &w);
        if (w.null_container && !v->null_w.null_container)
            v->null_w = w;
        if (!w.any_gpu && w.claim_unknown && !v->claim_w.claim_unknown)
            v->claim_w = w;
        if (!w.any_gpu || w.launcher || w.bad_value)
            continue;
        v->any_gpu = true;
        v->skip = v->skip || (skip && strcmp(skip, "true") == 0);
        if (place_job_pod(s, req, e, pod, &w, &p) < 0)
            return -1;
        /* A pod kubelet's Topology Manager would refuse (numafit.h):
         * said where kubectl shows it, not only to the controller. */
        for (size_t k = 0; k < p.n_numa; k++)
            if (numafit_pod(p.numa[k].kind, p.numa[k].name, pod, 0,
                            decision_say, d) < 0)
                return -1;
        if (p.unknown && !v->unknown)
            v->unknown = p.unknown;
        if (p.unresolved && !p.unresolved_type && !v->unresolved) {
            /* p's own text: kept, p is gone by the message. */
            snprintf(v->what, sizeof(v->what), "%s", p.unresolved);
            v->unresolved = v->what;
        }
        if (!placement_known(&p))
            continue;
        if (p.zones.n > 1 && v->zones.n < 2) {
            v->zones = p.zones;
            v->zones_spec = json_get(pod, "spec");
            v->zones_pods = w.pods;
        }
        v->pinned = true;
        /* allocationMode All: every GPU of the node (the fewest). */
        if (w.claim_all && p.n_types > 0) {
            w.gpus = p.types[0]->count;
            for (size_t j = 1; j < p.n_types; j++)
                if (p.types[j]->count < w.gpus)
                    w.gpus = p.types[j]->count;
            if (w.procs_from_gpus && e->job.procs <= 0)
                w.procs = w.gpus;
        }
        judge_all(s, &w, &p, &f);
        if (f.sev > v->worst.sev || v->worst.type == NULL) {
            finding_free(&v->worst);
            v->worst = f;
            v->w = w;
            /* GPUs from claims the view cannot fully read: a guess. */
            v->evidence = w.claim_weak ? EVIDENCE_NONE : p.evidence;
            keep_row(v, &p);
        } else {
            finding_free(&f);
        }
    }
    return 0;
}

/* The worst finding into d as verdict says; extra (may be NULL) says why
 * the job was not repacked. */
static int
report_finding(struct decision *d, const struct finding *f,
               enum verdict verdict, const char *extra)
{
    d->verdict = verdict;
    if (finding_explain(d, f) < 0)
        return -1;
    if (verdict == VERDICT_DENY)
        return finding_deny(d, f, extra);
    if (finding_warn(d, f) < 0)
        return -1;
    return extra ? decision_warn(d, "%s", extra) : 0;
}

/* A hard finding: repack the job when allowed and safe, else judge it. */
static int
hard_finding(const struct snapshot *s, const struct admission *req,
             const struct expansion *e, struct verdict_of_job *v,
             enum mode mode, struct decision *d)
{
    char why[160] = "", extra[200] = "";
    const struct instance_type *t = v->worst.type;
    bool create = strcmp(req->operation, "CREATE") == 0;
    enum verdict verdict =
        judge_verdict(mode, SEV_HARD, v->evidence, false, &d->judged);
    int rc = 0;

    if (s->repack && v->worst.fragmented && mode != MODE_AUDIT && create &&
        v->w.claim_requests > 0) {
        /* repack.c writes nvidia.com/gpu limits; a claim's count is the
         * template's, an object of its own. */
        snprintf(extra, sizeof(extra),
                 "not repacked: its GPUs come from DRA claims");
    } else if (s->repack && v->worst.fragmented && mode != MODE_AUDIT &&
               create) {
        rc = repack_job(req->object, e, v->w.gpus, workload_world(&v->w), t,
                        v->worst.nics, d, why, sizeof(why));
        if (rc < 0)
            return -1;
        if (rc == 1) {
            v->repacked = true;
            d->verdict = judge_verdict(mode, SEV_OK, v->evidence, true,
                                       &d->judged);
            d->finding = false; /* the repack resolved it */
            free(d->fix);
            d->fix = finding_fix(&v->worst);
            return decision_set_reason(d, "repacked to whole nodes") < 0 ||
                           d->fix == NULL
                       ? -1
                       : 0;
        }
        snprintf(extra, sizeof(extra), "not repacked: %s", why);
    }
    return report_finding(d, &v->worst, verdict, extra[0] ? extra : NULL);
}

/* An UPDATE that leaves the spec alone (labels, finalizers) is not ours. */
static bool
spec_unchanged(const struct admission *req)
{
    const cJSON *now = json_get(req->object, "spec");
    const cJSON *was = json_get(req->old_object, "spec");

    return strcmp(req->operation, "UPDATE") == 0 && was &&
           cJSON_Compare(now, was, true);
}

/*
 * Nor is an UPDATE whose pods differ from before only by what Kueue
 * merges in when it starts the job (suspend goes false with it): refusing
 * it would leave the job suspended for good, and a change to containers
 * makes Kueue rebuild its Workload. Pods are judged when created, with
 * the selector Kueue gave them. 1 yes, 0 no, -1 out of memory.
 */
static int
update_narrows(const struct admission *req, const struct expansion *now)
{
    struct expansion was;
    int rc;

    if (strcmp(req->operation, "UPDATE") != 0 ||
        !cJSON_IsObject(req->old_object))
        return 0;
    if (expand(req->old_object, req->runtimes, &was) < 0) {
        expansion_free(&was);
        return -1;
    }
    rc = expand_narrows(&was, now) ? 1 : 0;
    expansion_free(&was);
    return rc;
}

int
decide_job(const struct snapshot *s, const struct admission *req,
           struct decision *d)
{
    const struct kind *row = object_row(req);
    enum framework fw = row ? row->framework : FRAMEWORK_NONE;
    enum mode mode = snapshot_framework_mode(s, req->namespace, fw);
    struct expansion e;
    struct verdict_of_job v = {0};
    int rc = -1;

    /* Another apiVersion of a job kind (v1alpha2 MPIJob) is judged pod
     * by pod; a framework switched off, not at all. */
    if ((row && !row->job_level) ||
        (fw != FRAMEWORK_NONE && s->frameworks[fw] == FRAMEWORK_OFF))
        return 0;
    if ((strcmp(req->operation, "CREATE") != 0 &&
         strcmp(req->operation, "UPDATE") != 0) ||
        !cJSON_IsObject(req->object) || spec_unchanged(req))
        return 0;
    if (expand(req->object, req->runtimes, &e) < 0 ||
        (rc = update_narrows(req, &e)) < 0)
        goto out;
    if (rc == 1) {
        rc = 0;
        goto out;
    }
    /* A framework's object is judged whole for the size its pods lack;
     * without one (a RayService's cluster) its pods are judged alone. */
    if (fw != FRAMEWORK_NONE && e.job.nodes == 0)
        goto out;
    rc = -1;
    if (judge_job(s, req, &e, &v, d) < 0)
        goto out;
    rc = 0;
    if (e.skipped ||
        (!v.any_gpu && !v.null_w.null_container && !v.claim_w.claim_unknown))
        goto out;
    d->mode = mode_name(mode);
    d->instance_type = v.worst.type ? v.worst.type->name : "unknown";
    d->known_by = evidence_name(v.pinned ? v.evidence : EVIDENCE_NONE);
    d->verdict = d->judged = VERDICT_ALLOW;
    if ((rc = judge_opt_out(s, req->namespace, v.skip, d)) != 0) {
        rc = rc < 0 ? -1 : 0;
        goto out;
    }
    if (v.null_w.null_container && workload_warn_null(&v.null_w, d) < 0) {
        rc = -1;
        goto out;
    }
    if (!v.any_gpu && v.claim_w.claim_unknown) {
        /* A claim's name alone: a guess, never a refusal. */
        rc = decision_warn(d, "DRA claim '%s': %s", v.claim_w.claim_unknown,
                           v.claim_w.claim_why) < 0 ||
                     decision_warn(d, "its GPUs are not known: the layout "
                                      "is not checked") < 0 ||
                     decision_set_reason(d, "GPUs of its DRA claims not "
                                            "known") < 0
                 ? -1
                 : 0;
        goto out;
    }
    if (!v.any_gpu) {
        rc = decision_set_reason(d, "GPU count is null");
        goto out;
    }
    d->finding = !v.pinned || v.worst.sev != SEV_OK;
    if (!v.pinned && v.unknown) {
        rc =
            decision_warn(d,
                          "instance type '%s' is not in topogate's table: "
                          "no topology check",
                          v.unknown) < 0 ||
                    decision_set_reason(d, "instance type not in the table") < 0
                ? -1
                : 0;
        goto out;
    }
    if (!v.pinned && v.unresolved) {
        /* No type to quote: say what the nodes themselves tell. */
        rc = decision_warn(d,
                           "the nodes its pods can land on include %s, "
                           "which topogate cannot identify: no topology "
                           "check",
                           v.unresolved) < 0 ||
                     decision_set_reason(d, "nodes not in the table") < 0
                 ? -1
                 : 0;
        goto out;
    }
    if (!v.pinned) {
        /* The runtime may well pin it: its pods are checked when created. */
        rc = decision_warn(d, "no instance type known for this job: its "
                              "pods are checked as they are created") < 0 ||
                     decision_set_reason(
                         d, "instance type not known at job level") < 0
                 ? -1
                 : 0;
        goto out;
    }
    if (zones_warn(&v.zones, v.zones_pods, v.zones_spec, d) < 0 ||
        (v.evidence == EVIDENCE_CLIQUE &&
         decision_warn(d, "%s", PLACEMENT_CLIQUE_NOTE) < 0)) {
        rc = -1;
        goto out;
    }
    if (v.worst.sev != SEV_OK && v.w.claim_weak &&
        (decision_warn(d, "DRA claims: %s", v.w.claim_why) < 0 ||
         decision_warn(d, "the pods' GPUs are a guess: not refused") < 0)) {
        rc = -1;
        goto out;
    }
    if (v.worst.sev == SEV_HARD)
        rc = hard_finding(s, req, &e, &v, mode, d);
    else if (v.worst.sev == SEV_SOFT)
        rc = report_finding(d, &v.worst, VERDICT_ALLOW, NULL);
    else
        rc = decision_set_reason(d, "whole-node layout");
    if (rc == 0 && mode == MODE_AUDIT && d->judged == VERDICT_DENY &&
        s->repack && v.worst.fragmented)
        rc = decision_warn(d, "audit: jobs.repack is on; enforce would try "
                              "to repack this job");
    if (rc == 0 && fw != FRAMEWORK_NONE)
        rc = judge_framework_note(s, req->namespace, fw, d);
    if (rc == 0 && d->verdict != VERDICT_DENY) {
        size_t had = d->n_ops;
        rc = job_launcher_env(s, req, &e, &v, mode, d);
        if (d->n_ops > had && d->verdict == VERDICT_ALLOW)
            d->verdict = d->judged = VERDICT_PATCH;
    }
out:
    finding_free(&v.worst);
    expansion_free(&e);
    return rc;
}
