/*
 * numafit.h - whether kubelet's Topology Manager on a kind of node
 * admits a pod: restricted and single-numa-node refuse, at the node and
 * after scheduling, what they cannot align to NUMA nodes as they want
 * (TopologyAffinityError). Read from the kind's NodeResourceTopology
 * (policy/view/viewnuma.h); told as warnings, never a refusal.
 */
#ifndef TOPOGATE_NUMAFIT_H
#define TOPOGATE_NUMAFIT_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "policy/view/view.h"

/* Takes one sentence; 0, or -1 to stop (as nodefacts_say). */
typedef int numafit_say(void *arg, const char *sentence);

/*
 * What the Topology Manager of kind k (named type, for messages) does
 * with pod, its main GPU container holding extra_gpus more than the pod
 * says (topogate's own patch): sentences to say, none when it admits.
 * 0, or what say returned when it stopped.
 */
int numafit_pod(const struct node_kind *k, const char *type,
                const cJSON *pod, long extra_gpus, numafit_say *say,
                void *arg);

#endif
