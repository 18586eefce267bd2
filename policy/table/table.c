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

static const char *const gpudirect_names[] = {
    [GPUDIRECT_NONE] = "none",
    [GPUDIRECT_TCPX] = "tcpx",
    [GPUDIRECT_TCPXO] = "tcpxo",
    [GPUDIRECT_RDMA] = "rdma",
};

const char *
gpudirect_name(enum gpudirect g)
{
    if ((size_t)g >= sizeof(gpudirect_names) / sizeof(gpudirect_names[0]))
        return NULL;
    return gpudirect_names[g];
}

int
gpudirect_parse(const char *word, enum gpudirect *out)
{
    for (size_t i = 1; i < sizeof(gpudirect_names) / sizeof(gpudirect_names[0]);
         i++) {
        if (strcmp(word, gpudirect_names[i]) == 0) {
            *out = (enum gpudirect)i;
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
 * The RDMA NIC resources device plugins advertise, by platform: which
 * name, who advertises it, what one unit is, and where that is written
 * (names the admin may change in the Network Operator's NicClusterPolicy;
 * these are the ones the sources show). A pattern "x*" is a prefix, "*x"
 * a suffix, "*x*" a part, anything else the whole name. `topogate tables`
 * prints both lists.
 */
static const struct rdma_name rdma_names[] = {
    {"vpc.amazonaws.com/efa",
     "AWS EKS: the EFA device plugin, one unit per EFA interface",
     "aws/eks-charts stable/aws-efa-k8s-device-plugin [EFA-VALS]"},
    {"*/efa", "EFA under another vendor prefix",
     "aws/eks-charts stable/aws-efa-k8s-device-plugin values.yaml"},
    {"rdma/ib",
     "AKS: the SR-IOV device plugin, one unit per InfiniBand VF; CoreWeave "
     "CKS: the same name, which its docs have pods request as 1 (\"used "
     "as a boolean\", not a device count)",
     "Azure/aks-rdma-infiniband configs/nicclusterpolicy/"
     "sriov-device-plugin/sriov.yaml [AKS-RDMA]; docs.coreweave.com "
     "products/networking/hpc-interconnect/use-gpudirect-rdma, "
     "Configure the Pods"},
    {"nvidia.com/rdma-vf",
     "OCI OKE: the Network Operator's SR-IOV VFs, one per RDMA port (16 "
     "on dual-port shapes, 8 on single-port); a preview option of "
     "Oracle's OKE stack, whose default is hostNetwork",
     "oracle-quickstart/oci-hpc-oke docs/using-rdma-network-interfaces-"
     "in-manifests.md, terraform/schema.yaml (\"Preview Features (not "
     "for production use)\")"},
    {"nvidia.com/sriov_rdma_vf", "OCI OKE: the VFs' name in older docs",
     "oracle-quickstart/oci-hpc-oke docs/running-rdma-workloads-on-oke.md, "
     "deleted in 8da1841 (2025-05) [OCI-VF]"},
    {"nvidia.com/mlnxnics", "OCI OKE GB200: shared HCAs",
     "NVIDIA/aicr NCCL validator, supportedNCCLCombinations"},
    {"networking.gke.io.networks/*",
     "GKE multi-networking: one per network attached; Google's examples "
     "attach GPU NICs by the networking.gke.io/interfaces annotation "
     "instead",
     "[OBS-GKERDMA]; GoogleCloudPlatform/container-engine-accelerators "
     "gpudirect-rdma/nccl-test.yaml"},
    {"networking.gke.io/*", "GKE networking resources",
     "GoogleCloudPlatform/container-engine-accelerators"},
    {"rdma/*", "the Network Operator's other RDMA resources (rdma/shared_ib)",
     "Azure/aks-rdma-infiniband configs/nicclusterpolicy [AKS-RDMA]"},
    {"*rdma*", "other SR-IOV RDMA VFs (intel.com/mlnx_sriov_rdma0)",
     "shared/corpus/nodes/kwok-virtual-dgx-a100-sriov-rdma.yaml"},
};

/*
 * Of those, the shared plugins' slots: the RDMA shared device plugin
 * advertises rdmaHcaMax slots (63 by default) and one slot grants every
 * HCA of the node, so its count is no NIC count and never a limit.
 */
static const struct rdma_name rdma_slot_names[] = {
    {"rdma/shared_ib", "AKS: the RDMA shared device plugin",
     "Azure/aks-rdma-infiniband configs/nicclusterpolicy/"
     "rdma-shared-device-plugin/rdma.yaml [AKS-RDMA]"},
    {"rdma/hca_shared_devices_a", "NVIDIA AICR on AKS: the same plugin",
     "NVIDIA/aicr#2276"},
    {"*shared*",
     "any shared plugin's name (the Network Operator's example is "
     "rdma/rdma_shared_device_a)",
     "docs/facts/node-labels.md#on-prem"},
    {"nvidia.com/mlnxnics", "OCI OKE GB200: shared HCAs",
     "NVIDIA/aicr NCCL validator, supportedNCCLCombinations"},
};

const struct rdma_name *
table_rdma_names(enum rdma_class class, size_t *n)
{
    if (class == RDMA_SLOTS) {
        *n = sizeof(rdma_slot_names) / sizeof(rdma_slot_names[0]);
        return rdma_slot_names;
    }
    *n = class == RDMA_NICS ? sizeof(rdma_names) / sizeof(rdma_names[0]) : 0;
    return rdma_names;
}

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
matches_any(const char *name, const struct rdma_name *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (name_matches(name, names[i].pattern))
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
