/* advice.c - see advice.h. */
#include "policy/jobs/advice.h"

#include "policy/k8s/pod.h"
#include "policy/kinds/kinds.h"
#include "policy/pod/claims.h"

/* Nearest whole number of nodes, halves rounded up, at least one. */
static long
nodes_for(long world, int per_node)
{
    long nodes = (world + per_node / 2) / per_node;
    return nodes > 0 ? nodes : 1;
}

/*
 * GPUs of each pod that no process uses: slotsPerWorker 1 on a 2-GPU
 * worker starts 1 rank there (mpirun gives a host its slots, no more).
 * A per-node launcher's torchrun starts the pod's processes itself.
 */
static long
idle_per_pod(const struct workload *w)
{
    if (w->per_node_launcher || w->procs <= 0 || w->procs >= w->gpus)
        return 0;
    return w->gpus - w->procs;
}

/* The world the fix aims at: the job's ranks, and its idle GPUs too. */
static long
world_wanted(const struct workload *w)
{
    return workload_world(w) + w->pods * idle_per_pod(w);
}

/*
 * The layout to offer for the job of w on nodes of t: whole nodes with
 * the same world size, or, for a job smaller than a node, one pod with
 * all of it (one pod is never fragmented, and the user's world size is
 * kept rather than grown to a node's).
 */
static void
layout_for(const struct workload *w, const struct instance_type *t,
           long *nodes, long *per_pod)
{
    long world = world_wanted(w);

    if (world < t->count) {
        *nodes = 1;
        *per_pod = world;
    } else {
        *nodes = nodes_for(world, t->count);
        *per_pod = t->count;
    }
}

long
advice_pod_gpus(const struct workload *w, const struct instance_type *t)
{
    long nodes, per;

    layout_for(w, t, &nodes, &per);
    return per;
}

/*
 * Pods that carry no job size (mpi-operator's workers, the pods of
 * Trainer's MPI runtimes): the fix names no count of them, only whole
 * nodes.
 */
static bool
unsized(const struct workload *w, const struct kind_fix *f)
{
    return !w->pods_known && (f->sizeless || w->trainer_mpi);
}

/*
 * The fix in the words of the pod's kind (kinds.c): a kind with a field
 * for it says an elastic maximum, a head replica or one launcher per
 * node in that field; plain pods get a count and a size.
 */
void
advice_layout(struct strbuf *sb, const struct workload *w,
              const struct instance_type *t)
{
    const struct kind_fix *f = kinds_fix_for(w);
    long world = workload_world(w), nodes, per;
    long now;

    layout_for(w, t, &nodes, &per);
    now = nodes * per;
    if (f->nodes == NULL && unsized(w, f)) {
        /* Plain pods that do not say how many there are: as below, no
         * count the job may not have. */
        strbuf_printf(sb, "put the job's GPUs on as few %s as hold them "
                          "(up to %d each)",
                      f->pods, t->count);
        return;
    } else if (f->nodes == NULL) {
        strbuf_printf(sb, "use %ld pod%s x %ld GPUs", nodes,
                      nodes == 1 ? "" : "s", per);
    } else if (unsized(w, f)) {
        /* The MPIJob's own check at CREATE gives the numbers; a pod
         * without the job's size gets none that the job may not have
         * (a 2-GPU job has no 8 to give). Nor do its workers say
         * whether mpirun starts ranks or torchruns. */
        strbuf_printf(sb, "put the job's GPUs on as few %s as hold them "
                          "(up to %d each), %s = a pod's GPUs",
                      f->pods, t->count, f->procs);
        if (f->nproc)
            strbuf_printf(sb, " (or one %s of them each)", f->nproc);
        return;
    } else if (w->elastic && f->elastic) {
        strbuf_printf(sb, "use %s: %ld, %s: %ld", f->elastic, nodes,
                      f->procs, per);
    } else if (w->has_master && f->head && nodes == 1) {
        /* A Worker of 0 replicas reads as a mistake: drop it. */
        strbuf_printf(sb, "use %s replicas: 1 and no %s, %s: %ld", f->head,
                      f->worker, f->procs, per);
    } else if (w->has_master && f->head) {
        strbuf_printf(sb, "use %s replicas: 1, %s: %ld, %s: %ld", f->head,
                      f->nodes, nodes - 1, f->procs, per);
    } else if (w->per_node_launcher && f->np) {
        /* More slots would pack the torchruns onto the first worker. */
        strbuf_printf(sb, "use %s: %ld, %s %ld, %s %ld", f->nodes, nodes,
                      f->np, nodes, f->nproc, per);
    } else {
        strbuf_printf(sb, "use %s: %ld, %s: %ld", f->nodes, nodes, f->procs,
                      per);
    }
    if (w->groups_alone && w->per_node_launcher && f->np)
        /* No world size to keep: the job trains several alone today. */
        strbuf_puts(sb, " (each torchrun is a world of its own: its line "
                        "has no --nnodes)");
    else if (now == world)
        strbuf_printf(sb, " (world size %ld kept)", world);
    else if (idle_per_pod(w) > 0 && f->procs)
        strbuf_printf(sb, " (world size %ld becomes %ld: %s %ld leaves %ld "
                          "of each pod's %ld GPUs idle)",
                      world, now, f->procs, w->procs, idle_per_pod(w),
                      w->gpus);
    else
        strbuf_printf(sb, " (world size %ld becomes %ld)", world, now);
}

void
advice_resources(struct strbuf *sb, const struct workload *w,
                 const struct instance_type *t, int nics)
{
    const struct kind_fix *f = kinds_fix_for(w);
    long nodes, per;

    layout_for(w, t, &nodes, &per);
    if (w->claim_requests > 0) {
        /* GPUs from DRA claims: the fix is in the template's terms. */
        char fix[256];
        claims_fix(w, unsized(w, f) ? 0 : per, fix, sizeof(fix));
        strbuf_puts(sb, fix);
        if (nics > 0 && nodes > 1)
            strbuf_printf(sb, ", and %s: %d in its limits",
                          type_nic_resource(t), nics);
        return;
    }
    if (unsized(w, f) && f->limits == NULL) {
        strbuf_printf(sb, "request %s: that count per pod", t->resource);
        if (nics > 0)
            strbuf_printf(sb, ", and %s: %d if there is more than one pod",
                          type_nic_resource(t), nics);
        return;
    }
    if (unsized(w, f)) {
        strbuf_printf(sb, "set %s%s%s %s to that count",
                      f->worker ? f->worker : "", f->worker ? " " : "",
                      f->limits, t->resource);
        if (nics > 0)
            strbuf_printf(sb, ", and %s: %d if there is more than one pod",
                          type_nic_resource(t), nics);
        return;
    }
    if (f->nodes == NULL) {
        strbuf_printf(sb, "request %s: %ld per pod", t->resource, per);
    } else {
        strbuf_puts(sb, "set ");
        if (w->has_master && f->head && nodes == 1)
            strbuf_printf(sb, "%s ", f->head);
        else if (w->has_master && f->head)
            strbuf_printf(sb, "%s and %s ", f->head, f->worker);
        else if (f->worker)
            strbuf_printf(sb, "%s ", f->worker);
        strbuf_printf(sb, "%s %s: %ld", f->limits, t->resource, per);
    }
    /* One pod keeps its traffic inside the node: it needs no NIC. */
    if (nics > 0 && nodes > 1)
        strbuf_printf(sb, ", %s: %d", type_nic_resource(t), nics);
}
