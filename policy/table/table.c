/*
 * table.c - names of interconnects, what they mean for splitting, the NIC
 * resource of a row, and which extended resources are RDMA NICs.
 */
#include "policy/table/table.h"

#include <string.h>

static const char *const link_names[] = {
    [LINK_SINGLE] = "single",
    [LINK_PCIE] = "pcie",
    [LINK_NVLINK] = "nvlink",
    [LINK_NVSWITCH] = "nvswitch",
    [LINK_NEURONLINK] = "neuronlink",
    [LINK_UNKNOWN] = "unknown",
};

const char *
link_name(enum interconnect link)
{
    if ((size_t)link >= sizeof(link_names) / sizeof(link_names[0]))
        return NULL;
    return link_names[link];
}

int
link_parse(const char *word, enum interconnect *out)
{
    for (size_t i = 0; i < sizeof(link_names) / sizeof(link_names[0]); i++) {
        if (strcmp(word, link_names[i]) == 0) {
            *out = (enum interconnect)i;
            return 0;
        }
    }
    return -1;
}

bool
link_is_nvlink(enum interconnect link)
{
    return link == LINK_NVLINK || link == LINK_NVSWITCH;
}

bool
type_multinode_nvlink(const struct instance_type *t)
{
    return t->accelerator && (strncmp(t->accelerator, "GB200", 5) == 0 ||
                              strncmp(t->accelerator, "GB300", 5) == 0);
}

const char *
type_nic_resource(const struct instance_type *t)
{
    if (t->efa <= 0 || t->nic_annotation)
        return NULL;
    return t->nic_resource ? t->nic_resource : TABLE_NIC_DEFAULT;
}

/*
 * The RDMA NIC resources device plugins advertise (names the admin may
 * change in the Network Operator's NicClusterPolicy; these are the ones
 * the sources show), from shared/research/cluster-view-facts.md 1.5-1.7
 * and platform-facts.md 10-11. A pattern "x*" is a prefix, "*x" a
 * suffix, "*x*" a part, anything else the whole name.
 */
static const char *const rdma_names[] = {
    "vpc.amazonaws.com/efa", /* AWS EFA device plugin, one per EFA [EFA-VALS] */
    "*/efa",                 /* the same NICs under another vendor prefix */
    "rdma/*",                /* Network Operator: rdma/ib (SR-IOV, one per
                                IB VF), rdma/shared_ib [AKS-RDMA] */
    "*rdma*",                /* nvidia.com/sriov_rdma_vf (OCI) [OCI-VF],
                                nvidia.com/rdma-vf, intel.com/mlnx_sriov_rdma0 */
    "nvidia.com/mlnxnics",   /* OKE GB200's shared HCAs (NVIDIA/aicr) */
    "networking.gke.io.networks/*", /* GKE multi-networking, one per
                                       network attached [OBS-GKERDMA] */
    "networking.gke.io/*",
};

/*
 * Of those, the shared plugins' slots: the RDMA shared device plugin
 * (rdmaHcaMax slots, 63 by default; one grants every HCA) names them
 * rdma/shared_ib (AKS) [AKS-RDMA], rdma/hca_shared_devices_a (NVIDIA
 * AICR on AKS, NVIDIA/aicr#2276) or rdma/rdma_shared_device_a (the
 * Network Operator's example); OKE's mlnxnics are shared HCAs too.
 */
static const char *const rdma_slot_names[] = {
    "*shared*",
    "nvidia.com/mlnxnics",
};

static bool
name_matches(const char *name, const char *pattern)
{
    size_t n = strlen(name), p = strlen(pattern);
    bool head = pattern[0] == '*', tail = p > 1 && pattern[p - 1] == '*';

    if (head && tail) {
        char part[64];
        if (p - 2 >= sizeof(part))
            return false;
        memcpy(part, pattern + 1, p - 2);
        part[p - 2] = '\0';
        return strstr(name, part) != NULL;
    }
    if (head)
        return n >= p - 1 && strcmp(name + n - (p - 1), pattern + 1) == 0;
    if (tail)
        return strncmp(name, pattern, p - 1) == 0;
    return strcmp(name, pattern) == 0;
}

static bool
matches_any(const char *name, const char *const *patterns, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (name_matches(name, patterns[i]))
            return true;
    return false;
}

enum rdma_class
table_rdma_class(const char *resource)
{
    if (resource == NULL ||
        !matches_any(resource, rdma_names,
                     sizeof(rdma_names) / sizeof(rdma_names[0])))
        return RDMA_NONE;
    if (matches_any(resource, rdma_slot_names,
                    sizeof(rdma_slot_names) / sizeof(rdma_slot_names[0])))
        return RDMA_SLOTS;
    return RDMA_NICS;
}
