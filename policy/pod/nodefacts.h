/*
 * nodefacts.h - facts of a kind of node that the table cannot know and
 * the cluster view shows in its labels, told as warnings: a GB200/GB300
 * node whose NVIDIA driver (GPU Feature Discovery's label) changes what
 * GPUDirect RDMA through its PCIe NICs needs. Never a refusal.
 *
 * Kubelet's Topology Manager policy is not among them: no Node label or
 * field carries it; numafit.h reads it from NFD's NodeResourceTopology.
 */
#ifndef TOPOGATE_NODEFACTS_H
#define TOPOGATE_NODEFACTS_H

#include "policy/table/table.h"
#include "policy/view/view.h"

/* Takes one sentence (at most 120 characters); 0, or -1 to stop. */
typedef int nodefacts_say(void *arg, const char *sentence);

/*
 * The facts of kind k, whose row (placement_kind()) is row, one sentence
 * each to say. 0, or what say returned when it stopped (-1).
 */
int nodefacts_kind(const struct node_kind *k, const struct instance_type *row,
                   nodefacts_say *say, void *arg);

#endif
