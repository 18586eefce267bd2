/*
 * gpudirect.h - what a whole-node pod on a GKE GPUDirect machine type
 * (gkeGPUDirect: tcpx, tcpxo, rdma) needs beside its GPUs, or NCCL runs
 * over TCP: the interface annotations naming the cluster's networks, the
 * receive-data-path manager sidecar and its NRI device annotation
 * (TCPX, TCPXO), the gIB NCCL plugin and its env (RDMA).
 */
#ifndef TOPOGATE_GPUDIRECT_H
#define TOPOGATE_GPUDIRECT_H

#include <cjson/cJSON.h>

#include "policy/decision.h"
#include "policy/kinds/workload.h"
#include "policy/pod/mutate.h"

#define ANNOTATION_GKE_INTERFACES "networking.gke.io/interfaces"
#define ANNOTATION_GKE_DEFAULT_IF "networking.gke.io/default-interface"

/*
 * For a pod of a multi-pod job on t (t->gpudirect set) that takes all of
 * the node's GPUs: adds the interface annotations where the pod has none
 * and t->gke_net names the networks, else warns that they are missing;
 * warns of each other piece the pod lacks. Nothing for other pods.
 * 0, or -1 out of memory.
 */
int gpudirect_pod(const cJSON *pod, const struct workload *w,
                  const struct target *t, struct decision *d);

#endif
