/* advice.c - see advice.h. */
#include "policy/jobs/advice.h"

#include "policy/k8s/pod.h"

/* Nearest whole number of nodes, halves rounded up, at least one. */
static long
nodes_for(long world, int per_node)
{
    long nodes = (world + per_node / 2) / per_node;
    return nodes > 0 ? nodes : 1;
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
    long world = workload_world(w);

    if (world < t->count) {
        *nodes = 1;
        *per_pod = world;
    } else {
        *nodes = nodes_for(world, t->count);
        *per_pod = t->count;
    }
}

void
advice_layout(struct strbuf *sb, const struct workload *w,
              const struct instance_type *t)
{
    long world = workload_world(w), nodes, per;
    long now;

    layout_for(w, t, &nodes, &per);
    now = nodes * per;
    switch (w->owner) {
    case OWNER_TRAINJOB:
        /* An MPI runtime's node pod carries no job size: the rule. */
        if (w->trainer_mpi && !w->pods_known) {
            strbuf_printf(sb,
                          "use fewer nodes with all %d GPUs each: "
                          "numProcPerNode: %d",
                          t->count, t->count);
            return;
        }
        strbuf_printf(sb,
                      "use spec.trainer.numNodes: %ld, numProcPerNode: %ld",
                      nodes, per);
        break;
    case OWNER_PYTORCHJOB:
        if (w->elastic)
            strbuf_printf(sb,
                          "use elasticPolicy.maxReplicas: %ld, nprocPerNode: "
                          "%ld",
                          nodes, per);
        else if (w->has_master && nodes == 1)
            /* A Worker of 0 replicas reads as a mistake: drop it. */
            strbuf_printf(sb,
                          "use Master replicas: 1 and no Worker, "
                          "nprocPerNode: %ld",
                          per);
        else if (w->has_master)
            strbuf_printf(sb,
                          "use Master replicas: 1, Worker replicas: %ld, "
                          "nprocPerNode: %ld",
                          nodes - 1, per);
        else
            strbuf_printf(sb, "use Worker replicas: %ld, nprocPerNode: %ld",
                          nodes, per);
        break;
    case OWNER_MPIJOB:
        /* Workers carry no job size: no count of them, only the node's
         * (the MPIJob's own check at CREATE gives the numbers). Nor do
         * they say whether mpirun starts ranks or torchruns. */
        if (!w->pods_known) {
            strbuf_printf(sb,
                          "use fewer Workers with all %d GPUs each: "
                          "slotsPerWorker: %d or one torchrun "
                          "--nproc_per_node %d each",
                          t->count, t->count, t->count);
            return;
        }
        /* More slots would pack the torchruns onto the first worker. */
        if (w->per_node_launcher)
            strbuf_printf(sb,
                          "use Worker replicas: %ld, mpirun -np %ld, "
                          "torchrun --nproc_per_node %ld",
                          nodes, nodes, per);
        else
            strbuf_printf(sb, "use Worker replicas: %ld, slotsPerWorker: %ld",
                          nodes, per);
        break;
    default:
        strbuf_printf(sb, "use %ld pod%s x %ld GPUs", nodes,
                      nodes == 1 ? "" : "s", per);
        break;
    }
    if (now == world)
        strbuf_printf(sb, " (world size %ld kept)", world);
    else
        strbuf_printf(sb, " (world size %ld becomes %ld)", world, now);
}

void
advice_resources(struct strbuf *sb, const struct workload *w,
                 const struct instance_type *t)
{
    long nodes, per;

    bool unsized = (w->owner == OWNER_MPIJOB || w->trainer_mpi) &&
                   !w->pods_known;

    layout_for(w, t, &nodes, &per);
    if (unsized)
        per = t->count; /* the rule above: whole nodes */
    switch (w->owner) {
    case OWNER_TRAINJOB:
        strbuf_printf(sb, "set spec.trainer.resourcesPerNode limits %s: %ld",
                      t->resource, per);
        break;
    case OWNER_PYTORCHJOB:
        strbuf_printf(sb, "set %s container limits %s: %ld",
                      !w->has_master ? "Worker"
                      : nodes == 1   ? "Master"
                                     : "Master and Worker",
                      t->resource, per);
        break;
    case OWNER_MPIJOB:
        strbuf_printf(sb, "set Worker container limits %s: %ld", t->resource,
                      per);
        break;
    default:
        strbuf_printf(sb, "request %s: %ld per pod", t->resource, per);
        break;
    }
    /* One pod keeps its traffic inside the node: it needs no NIC. */
    if (type_nic_resource(t) && unsized)
        strbuf_printf(sb, ", and %s: %d if there is more than one",
                      type_nic_resource(t), t->efa);
    else if (type_nic_resource(t) && nodes > 1)
        strbuf_printf(sb, ", %s: %d", type_nic_resource(t), t->efa);
}
