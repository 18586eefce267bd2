/* advice.c - see advice.h. */
#include "advice.h"

#include "pod.h"

/* Nearest whole number of nodes, halves rounded up, at least one. */
static long
nodes_for(long world, int per_node)
{
    long nodes = (world + per_node / 2) / per_node;
    return nodes > 0 ? nodes : 1;
}

void
advice_layout(struct strbuf *sb, const struct workload *w,
              const struct instance_type *t)
{
    long world = workload_world(w);
    long nodes = nodes_for(world, t->count);
    long now = nodes * t->count;

    switch (w->owner) {
    case OWNER_TRAINJOB:
        strbuf_printf(sb,
                      "use spec.trainer.numNodes: %ld, numProcPerNode: %d",
                      nodes, t->count);
        break;
    case OWNER_PYTORCHJOB:
        if (w->elastic)
            strbuf_printf(sb,
                          "use elasticPolicy.maxReplicas: %ld, nprocPerNode: "
                          "%d",
                          nodes, t->count);
        else if (w->has_master)
            strbuf_printf(sb,
                          "use Master replicas: 1, Worker replicas: %ld, "
                          "nprocPerNode: %d",
                          nodes - 1, t->count);
        else
            strbuf_printf(sb, "use Worker replicas: %ld, nprocPerNode: %d",
                          nodes, t->count);
        break;
    case OWNER_MPIJOB:
        /* Workers carry no job size: give the rule, not a number. */
        /* Nor do they say whether mpirun starts ranks or torchruns. */
        if (!w->pods_known) {
            strbuf_printf(sb,
                          "use Worker replicas = total GPUs / %d, with "
                          "slotsPerWorker: %d or one torchrun "
                          "--nproc_per_node %d each",
                          t->count, t->count, t->count);
            return;
        }
        /* More slots would pack the torchruns onto the first worker. */
        if (w->per_node_launcher)
            strbuf_printf(sb,
                          "use Worker replicas: %ld, mpirun -np %ld, "
                          "torchrun --nproc_per_node %d",
                          nodes, nodes, t->count);
        else
            strbuf_printf(sb, "use Worker replicas: %ld, slotsPerWorker: %d",
                          nodes, t->count);
        break;
    default:
        strbuf_printf(sb, "use %ld pod%s x %d GPUs", nodes,
                      nodes == 1 ? "" : "s", t->count);
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
    switch (w->owner) {
    case OWNER_TRAINJOB:
        strbuf_printf(sb, "set spec.trainer.resourcesPerNode limits %s: %d",
                      t->resource, t->count);
        break;
    case OWNER_PYTORCHJOB:
    case OWNER_MPIJOB:
        strbuf_printf(sb, "set %s container limits %s: %d",
                      w->has_master ? "Master and Worker" : "Worker",
                      t->resource, t->count);
        break;
    default:
        strbuf_printf(sb, "request %s: %d per pod", t->resource, t->count);
        break;
    }
    if (type_nic_resource(t))
        strbuf_printf(sb, ", %s: %d", type_nic_resource(t), t->efa);
}
