/*
 * kuberesources.h - what the cluster view is made of: nodes, and Kueue's
 * ResourceFlavors, ClusterQueues and LocalQueues. One list, for the
 * watch helper (topogate-kubewatch), the server that reads it, and the
 * client's test driver. Everything here is static.
 */
#ifndef TOPOGATE_KUBERESOURCES_H
#define TOPOGATE_KUBERESOURCES_H

#include <stddef.h>

#include "webhook/kube.h"

/* The resources, n of them. */
const struct kube_resource *kube_resources(size_t *n);

/* The kind of a resource's objects ("nodes" -> "Node"), or NULL. */
const char *kube_resource_kind(const char *name);

#endif
