/* judge.c - see judge.h. The layout rules of DESIGN.md "Decision" 4. */
#include "policy/judge.h"

#include <stdlib.h>
#include <string.h>

#include "policy/jobs/advice.h"
#include "policy/k8s/labels.h"
#include "policy/k8s/pod.h"

static struct strbuf *
next_part(struct finding *f)
{
    return &f->parts[f->n_parts++];
}

/*
 * A layout the command fixes beats the spec the fix changes: name the
 * flag, or the job runs as before (1 rank on 8 GPUs) or fails to map.
 */
static void
advice_command(struct finding *f, const struct workload *w)
{
    if (w->launch_fixed[0] != '\0')
        strbuf_printf(next_part(f),
                      "change the command's %s too: the command beats "
                      "the spec",
                      w->launch_fixed);
}

void
finding_free(struct finding *f)
{
    for (size_t i = 0; i < FINDING_PARTS; i++)
        strbuf_free(&f->parts[i]);
    memset(f, 0, sizeof(*f));
}

static const char *
link_title(enum interconnect link)
{
    switch (link) {
    case LINK_NVSWITCH:
        return "NVSwitch";
    case LINK_NVLINK:
        return "NVLink";
    case LINK_PCIE:
        return "PCIe";
    default:
        return link_name(link);
    }
}

/*
 * Pods there that claim an IMEX ComputeDomain channel, or whose env asks
 * for the channels a node daemon gives, reach each other over NVLink
 * across pods and nodes: splitting is not a loss. Another DRA claim (a
 * GPU, an RDMA NIC) does not join them.
 */
static bool
computedomain_connected(const struct workload *w, const struct instance_type *t)
{
    return (w->cd_channel || w->imex_env) && type_multinode_nvlink(t);
}

/*
 * The NICs a fix may ask for: the fewest that any type the pod can land
 * on has under t's NIC resource (none where one lacks it), or topogate
 * would refuse its own fix as unschedulable there (issue 43).
 */
static int
fix_nics(const struct placement *p, const struct instance_type *t)
{
    const char *nic = type_nic_resource(t);
    int fewest = nic && !t->nics_need_evidence ? t->efa : 0;

    /* A table row with nicsNeedEvidence says nothing of the nodes' NICs;
     * a row from the view's nodes has their own count (placement_view.c). */
    for (size_t i = 0; i < p->n_types && fewest > 0; i++) {
        const char *other = type_nic_resource(p->types[i]);
        if (other == NULL || strcmp(other, nic) != 0 ||
            p->types[i]->nics_need_evidence)
            fewest = 0;
        else if (p->types[i]->efa < fewest)
            fewest = p->types[i]->efa;
    }
    return fewest;
}

/*
 * A split on NVLink nodes whose kubelet refuses the pods its fix would
 * make (single-numa-node, placement.h numa_gpus): the fix would not run
 * there, so the split is warned and not refused, and nothing is
 * repacked. Into f; true when so.
 */
static bool
fix_refused(const struct workload *w, const struct placement *p,
            const struct instance_type *t, struct finding *f)
{
    long per;

    if (p->numa_gpus <= 0 || (per = advice_pod_gpus(w, t)) <= p->numa_gpus)
        return false;
    f->sev = SEV_SOFT;
    /* No fix: the one that would help is not the pod's to make. */
    strbuf_printf(next_part(f),
                  "%s (%s) split into %ld-GPU pods: not refused; kubelet's "
                  "single-numa-node policy admits no %ld-GPU pod",
                  t->name, link_title(t->link), w->gpus, per);
    return true;
}

static void
judge(const struct workload *w, const struct instance_type *t,
      const struct placement *p, struct finding *f)
{
    memset(f, 0, sizeof(*f));
    if (w->gpus > t->count) {
        f->sev = SEV_HARD;
        f->unschedulable = true;
        strbuf_printf(next_part(f),
                      "pod asks for %ld GPUs but %s has %d: it can never be "
                      "scheduled",
                      w->gpus, t->name, t->count);
        return;
    }
    /* workload.c counts EFA: other NICs are not the pod's to exceed. */
    if (w->efa > t->efa && type_nic_resource(t) &&
        strcmp(type_nic_resource(t), RESOURCE_EFA) == 0) {
        f->sev = SEV_HARD;
        f->unschedulable = true;
        strbuf_printf(next_part(f),
                      "pod asks for %ld EFA devices but %s has %d: it can "
                      "never be scheduled",
                      w->efa, t->name, t->efa);
        return;
    }
    if (w->gpus == t->count && w->pods >= 2 && type_multinode_nvlink(t) &&
        !w->cd_channel && !w->imex_env) {
        /* Whole nodes, but each one alone: NCCL crosses nodes on the NICs. */
        f->sev = SEV_SOFT;
        /* A worker of mpi-operator carries no job size: say no number. */
        if (w->pods_known)
            strbuf_printf(next_part(f), "%ld-pod job", w->pods);
        else
            strbuf_puts(next_part(f), "multi-pod job");
        strbuf_printf(&f->parts[0],
                      " on %s claims no ComputeDomain channel: "
                      "NVLink across its nodes is unused",
                      t->name);
        strbuf_puts(next_part(f),
                    "claim a ComputeDomain's channel (its "
                    "spec.channel.resourceClaimTemplate) in "
                    "spec.resourceClaims");
        return;
    }
    if (w->gpus == t->count || w->pods < 2)
        return;
    if (t->link == LINK_UNKNOWN) {
        /* A guess may warn: nothing says whether this split costs NVLink. */
        f->sev = SEV_SOFT;
        strbuf_printf(next_part(f),
                      "%s (%dx %s) split into %ld-GPU pods: how its GPUs are "
                      "joined is not known, so the layout is not checked",
                      t->name, t->count, t->accelerator, w->gpus);
        advice_layout(next_part(f), w, t);
        advice_command(f, w);
        return;
    }
    if (link_is_nvlink(t->link) && !computedomain_connected(w, t) &&
        fix_refused(w, p, t, f))
        return;
    if (link_is_nvlink(t->link) && !computedomain_connected(w, t)) {
        f->sev = SEV_HARD;
        strbuf_printf(next_part(f),
                      "fragmented layout: %s (%dx %s, %s) split into %ld-GPU "
                      "pods; NCCL cannot use NVLink across pods",
                      t->name, t->count, t->accelerator, link_title(t->link),
                      w->gpus);
        advice_layout(next_part(f), w, t);
        f->nics = fix_nics(p, t);
        advice_resources(next_part(f), w, t, f->nics);
        advice_command(f, w);
        f->fragmented = true;
    } else if (t->link == LINK_PCIE) {
        f->sev = SEV_SOFT;
        strbuf_printf(next_part(f),
                      "%s (%dx %s, PCIe) split into %ld-GPU pods: CUDA P2P "
                      "between them is lost",
                      t->name, t->count, t->accelerator, w->gpus);
        advice_layout(next_part(f), w, t);
        advice_command(f, w);
    }
}

/* What to say when no row of the table describes the node. */
static void
judge_unknown(const struct snapshot *s, const struct placement *p,
              struct finding *f)
{
    memset(f, 0, sizeof(*f));
    f->sev = s->unknown == UNKNOWN_DENY ? SEV_HARD : SEV_SOFT;
    if (p->unresolved)
        strbuf_printf(next_part(f),
                      "the %s this pod can land on include %s, which "
                      "topogate cannot identify: no topology check, no patch",
                      p->via, p->unresolved);
    else if (p->too_many)
        strbuf_printf(next_part(f),
                      "the pod can land on more than %d kinds of node: no "
                      "topology check, no patch",
                      PLACEMENT_MAX);
    else if (p->unknown)
        strbuf_printf(next_part(f),
                      "instance type '%s' is not in topogate's table: no "
                      "topology check, no patch",
                      p->unknown);
    else if (p->pinned)
        strbuf_printf(next_part(f),
                      "no instance type in topogate's table matches the %s: "
                      "no topology check, no patch",
                      p->via);
    else if (p->node && p->no_node)
        strbuf_printf(next_part(f),
                      "node '%s' that this pod names is not a GPU node it "
                      "fits in the cluster view: no topology check, no patch",
                      p->node);
    else if (p->node)
        strbuf_printf(next_part(f),
                      "this pod names node '%s', and without a cluster view "
                      "topogate cannot tell what it is: no topology check, "
                      "no patch",
                      p->node);
    else if (p->no_node)
        strbuf_puts(next_part(f),
                    "no node in the cluster fits this pod yet and it pins "
                    "no instance type: no topology check, no patch");
    else
        strbuf_puts(next_part(f),
                    "no instance type pinned (nodeSelector "
                    "node.kubernetes.io/instance-type): no topology check, "
                    "no patch");
    if (f->sev == SEV_HARD)
        strbuf_puts(next_part(f),
                    "this cluster requires GPU training pods on a known "
                    "instance type: see `topogate tables`");
}

/* The candidates' worst finding goes into *worst; the rest are freed. */
void
judge_all(const struct snapshot *s, const struct workload *w,
          const struct placement *p, struct finding *worst)
{
    struct finding f;

    memset(worst, 0, sizeof(*worst));
    worst->sev = SEV_OK;
    if (!placement_known(p)) {
        judge_unknown(s, p, worst);
        return;
    }
    for (size_t i = 0; i < p->n_types; i++) {
        judge(w, p->types[i], p, &f);
        f.type = p->types[i];
        if (f.sev > worst->sev) {
            finding_free(worst);
            *worst = f;
        } else {
            finding_free(&f);
        }
    }
}

enum verdict
judge_verdict(enum mode mode, enum severity sev, enum evidence ev,
              bool patched, enum verdict *judged)
{
    enum verdict v;

    if (sev == SEV_HARD)
        v = ev != EVIDENCE_NONE ? VERDICT_DENY : VERDICT_WARN;
    else
        v = patched ? VERDICT_PATCH : VERDICT_ALLOW;
    if (judged)
        *judged = v;
    return v == VERDICT_DENY && mode != MODE_ENFORCE ? VERDICT_WARN : v;
}

int
judge_opt_out(const struct snapshot *s, const char *ns, bool asked,
              struct decision *d)
{
    if (!asked)
        return 0;
    if (!snapshot_opt_out_for(s, ns))
        return decision_warn(d, ANNOTATION_SKIP " is not honoured by this "
                                                "cluster's policy");
    d->verdict = d->judged = VERDICT_ALLOW;
    return decision_set_reason(d, "opted out with " ANNOTATION_SKIP) < 0 ? -1
                                                                         : 1;
}

char *
finding_fix(const struct finding *f)
{
    struct strbuf sb = {0};

    for (size_t i = 1; i < f->n_parts; i++) {
        if (i > 1)
            strbuf_puts(&sb, "; ");
        strbuf_puts(&sb, f->parts[i].buf ? f->parts[i].buf : "");
    }
    return f->n_parts > 1 ? strbuf_take(&sb) : NULL;
}

int
finding_explain(struct decision *d, const struct finding *f)
{
    free(d->fix);
    d->fix = finding_fix(f);
    if (f->n_parts > 1 && d->fix == NULL)
        return -1;
    return decision_set_reason(d, f->parts[0].buf ? f->parts[0].buf : "");
}

int
finding_warn(struct decision *d, const struct finding *f)
{
    for (size_t i = 0; i < f->n_parts; i++)
        if (f->parts[i].buf && decision_warn(d, "%s", f->parts[i].buf) < 0)
            return -1;
    return 0;
}

int
finding_deny(struct decision *d, const struct finding *f, const char *extra)
{
    struct strbuf sb = {0};
    char *msg;
    int rc;

    for (size_t i = 0; i < f->n_parts; i++)
        strbuf_printf(&sb, "%s%s", i ? "; " : "",
                      f->parts[i].buf ? f->parts[i].buf : "");
    if (extra)
        strbuf_printf(&sb, "; %s", extra);
    if ((msg = strbuf_take(&sb)) == NULL)
        return -1;
    rc = decision_deny(d, "%s", msg);
    free(msg);
    return rc;
}

int
judge_framework_note(const struct snapshot *s, const char *ns,
                     enum framework fw, struct decision *d)
{
    if (d->judged != VERDICT_DENY || d->verdict == VERDICT_DENY ||
        snapshot_framework_mode(s, ns, fw) == snapshot_mode_for(s, ns))
        return 0;
    return decision_warn(d, "policy frameworks.%s is %s: with enforce "
                            "this would be refused",
                         framework_key(fw),
                         framework_level_name(s->frameworks[fw]));
}
