/*
 * zones.h - a multi-node job on RDMA NICs whose nodes may span zones.
 *
 * EFA's OS-bypass traffic stays inside one subnet, and a subnet lives in
 * one zone: a job spread over zones falls back to slower paths or fails
 * to connect (README "Zones"). With the cluster view, topogate knows the
 * zones of the nodes a pod can land on and warns; it never refuses for
 * this, since the scheduler may still place every pod in one zone.
 */
#ifndef TOPOGATE_ZONES_H
#define TOPOGATE_ZONES_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "policy/decision.h"
#include "policy/pod/placement.h"

/*
 * Warns in d when a job of pods > 1 whose candidate nodes (z) have RDMA
 * NICs can land in more than one zone and its pod spec does not keep it in one
 * (a nodeSelector or required node affinity on the zone, or a required pod
 * affinity with the zone as topologyKey). 0, or -1 out of memory.
 */
int zones_warn(const struct zone_set *z, long pods, const cJSON *spec,
               struct decision *d);

/*
 * The policy's alternative to the warning (inject.zoneAffinity): for the
 * same pods, a required pod affinity on the zone over the labels that
 * name the pod's job (JobSet's jobset-name for Trainer v2; the operator's
 * job-name and operator-name for Training Operator v1 and mpi-operator),
 * so the scheduler keeps the job in the zone of its first pod. A pod
 * whose labels name no job gets the warning. 0, or -1 out of memory.
 */
int zones_patch(const struct zone_set *z, long pods, const cJSON *pod,
                struct decision *d);

#endif
