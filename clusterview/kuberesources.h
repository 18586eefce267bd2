/*
 * kuberesources.h - what the cluster view is made of: nodes, Kueue's
 * ResourceFlavors, ClusterQueues and LocalQueues, Trainer's
 * ClusterTrainingRuntimes and TrainingRuntimes, DRA's DeviceClasses,
 * ResourceSlices and ResourceClaimTemplates, and NFD's
 * NodeResourceTopologies (each node's kubelet Topology Manager policy).
 * One list, for the watch helper (topogate-kubewatch), the server that
 * reads it, and the client's test driver. Everything here is static.
 */
#ifndef TOPOGATE_KUBERESOURCES_H
#define TOPOGATE_KUBERESOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include "kube/kube.h"

/* The resources, n of them. */
const struct kube_resource *kube_resources(size_t *n);

/* The kind of a resource's objects ("nodes" -> "Node"), or NULL. */
const char *kube_resource_kind(const char *name);

/* The index of a resource in kube_resources(), or -1. */
int kube_resource_index(const char *name);

/*
 * Whether a resource, in the state the client last reported (synced, and
 * why not), is as listed as it can get: synced, or optional (a CRD) and
 * not served or not ours to read. The helper's --once and the server's
 * synced gauge both wait for this.
 */
bool kube_resource_settled(const struct kube_resource *r, bool synced,
                           const char *why);

#endif
