/*
 * viewdra.h - what the cluster view reads of Dynamic Resource Allocation
 * (resource.k8s.io/v1): the devices a node's ResourceSlices publish, what
 * a DeviceClass selects, and how many devices a ResourceClaimTemplate's
 * request asks for. Pure readers over parsed objects; strings returned
 * are borrowed from the object unless said otherwise.
 */
#ifndef TOPOGATE_VIEWDRA_H
#define TOPOGATE_VIEWDRA_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* The NVIDIA DRA driver's name for its GPUs (NVIDIA/k8s-dra-driver-gpu
 * deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml). */
#define DRA_DRIVER_GPU "gpu.nvidia.com"
/* Its ComputeDomain driver (deviceclass-compute-domain-default-channel.yaml).
 */
#define DRA_DRIVER_CHANNEL "compute-domain.nvidia.com"
/* DRANET, the RDMA NIC driver AWS ships as its EFA DRA driver
 * (kubernetes-sigs/dranet cmd/dranet/app.go, driverName). */
#define DRA_DRIVER_NET "dra.net"

/*
 * A ResourceSlice cut down to what a node's kind needs, as an owned
 * object: {"node", "driver", "pool", "generation", "gpus", "product",
 * "nics"}. NULL when the slice names no single node (nodeSelector,
 * allNodes, perDeviceNodeSelection: its devices are no one node's) or
 * out of memory; *per_node says which.
 */
cJSON *viewdra_slice_summary(const cJSON *slice, bool *per_node);

/* What a node's slices add up to. product is owned by the caller
 * (free()), NULL when no GPU device names one or two names differ. */
struct dra_devices {
    long gpus;     /* whole GPUs: type "gpu" of gpu.nvidia.com */
    char *product; /* their productName, as GFD labels it */
    long nics;     /* RDMA NICs: dra.net devices with rdma true */
};

/* Adds up the summaries in slices (a map of viewdra_slice_summary()
 * objects) that are node's, the newest generation of each pool alone.
 * -1 out of memory. */
int viewdra_node(const cJSON *slices, const char *node,
                 struct dra_devices *out);

/* An NVML device name as GPU Feature Discovery writes it into
 * nvidia.com/gpu.product: out holds at least len bytes. */
void viewdra_gfd_product(const char *name, char *out, size_t len);

/* What a DeviceClass's selectors say its devices are. */
enum dra_class {
    DRA_CLASS_UNREAD, /* an expression not of the forms below: no evidence */
    DRA_CLASS_GPU,    /* gpu.nvidia.com devices of type 'gpu': whole GPUs */
    DRA_CLASS_GPU_NARROWED, /* the same, with more we cannot read: GPUs,
                               on some nodes we cannot tell */
    DRA_CLASS_NIC,          /* dra.net devices: NICs */
    DRA_CLASS_CHANNEL,      /* compute-domain.nvidia.com: IMEX channels */
    DRA_CLASS_OTHER,        /* another driver's, or MIG slices, VFIO GPUs */
};

/* The class of a DeviceClass object (NULL: DRA_CLASS_UNREAD). */
enum dra_class viewdra_class(const cJSON *device_class);

const char *viewdra_class_name(enum dra_class c);

#endif
