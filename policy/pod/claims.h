/*
 * claims.h - the GPUs a pod's Dynamic Resource Allocation claims ask for,
 * read through the cluster view: a claim names a ResourceClaimTemplate
 * of the pod's namespace, whose requests name DeviceClasses and counts
 * (resource.k8s.io/v1 ExactDeviceRequest: deviceClassName, count,
 * allocationMode; DeviceRequest.firstAvailable: DeviceSubRequests tried
 * in order). ComputeDomain channel claims are not GPUs.
 *
 * Borrows: the strings claims_read() sets point into the view.
 */
#ifndef TOPOGATE_CLAIMS_H
#define TOPOGATE_CLAIMS_H

#include <cjson/cJSON.h>

#include "policy/kinds/workload.h"
#include "policy/view/view.h"

/*
 * Adds to w (workload_read()'s, for pod) what its claims ask for in the
 * view v (NULL: no view, every claim is unknown): claim_gpus (also
 * into gpus, any_gpu), claim_all, the request the fix names, claim_nics,
 * cd_channel for a claim of the ComputeDomain driver's class; and where
 * the view cannot tell, claim_unknown (nothing counted for that claim)
 * or claim_weak (counted, but no evidence for a refusal), with the
 * reason in claim_why. Only training pods (w->owner) are read.
 */
void claims_read(const struct view *v, const char *ns, const cJSON *pod,
                 struct workload *w);

/* Whole GPUs per pod for a layout of per GPUs: the fix in claim terms
 * into out ("count: 8 (or allocationMode: All) in ResourceClaimTemplate
 * 'x' request 'gpu'"); per 0 when the job's size is not known: "to that
 * count", the layout advice's. */
void claims_fix(const struct workload *w, long per, char *out, size_t len);

#endif
