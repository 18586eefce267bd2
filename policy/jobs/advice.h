/*
 * advice.h - the whole-node layout to use instead, in the words of the
 * object the user wrote (TrainJob, PyTorchJob, MPIJob fields).
 */
#ifndef TOPOGATE_ADVICE_H
#define TOPOGATE_ADVICE_H

#include "base/strbuf.h"
#include "policy/table/table.h"
#include "policy/kinds/workload.h"

/* The GPUs of one pod of the layout advice_layout() gives: t's count, or
 * the job's all where they fit one node. */
long advice_pod_gpus(const struct workload *w, const struct instance_type *t);

/*
 * Appends "use numNodes: 2, numProcPerNode: 8 (world size 16 kept)" or the
 * like for the job of w on node type t, keeping the world size where it
 * divides into whole nodes and rounding to the nearest otherwise.
 */
void advice_layout(struct strbuf *sb, const struct workload *w,
                   const struct instance_type *t);

/*
 * Appends where the whole node's GPUs and EFA go, in the owner's fields:
 * "set spec.trainer.resourcesPerNode limits nvidia.com/gpu: 8, ...";
 * nics is how many of t's NIC resource to ask for (0: none).
 */
void advice_resources(struct strbuf *sb, const struct workload *w,
                      const struct instance_type *t, int nics);

#endif
