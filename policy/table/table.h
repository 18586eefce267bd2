/*
 * table.h - one row of the topology table: what an instance type offers.
 *
 * Rows are owned by the snapshot that loaded them; everything here borrows.
 */
#ifndef TOPOGATE_TABLE_H
#define TOPOGATE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum interconnect {
    LINK_SINGLE,     /* one accelerator: nothing to split */
    LINK_PCIE,       /* several, joined only by PCIe */
    LINK_NVLINK,     /* NVLink without a switch (p3 cube-mesh, p6-b300) */
    LINK_NVSWITCH,   /* every GPU to every GPU through NVSwitch */
    LINK_NEURONLINK, /* Trainium devices */
    /*
     * Several GPUs whose links the sources do not give (a VM slice of an
     * 8-GPU board). Never NVLink to link_is_nvlink(): a refusal needs
     * evidence.
     */
    LINK_UNKNOWN,
};

/*
 * gkeGPUDirect: the GPUDirect stack of a GKE machine type, which says
 * what a whole-node pod needs beside the interface annotation
 * (policy/pod/gpudirect.c): the receive-data-path manager sidecar and its
 * NRI device annotation for TCPX (a3-highgpu, a3-edgegpu) and TCPXO
 * (a3-megagpu), the gIB NCCL plugin for RDMA (a3-ultragpu, a4, a4x).
 */
enum gpudirect {
    GPUDIRECT_NONE,
    GPUDIRECT_TCPX,
    GPUDIRECT_TCPXO,
    GPUDIRECT_RDMA,
};

/* "tcpx", "tcpxo", "rdma" ("none" for GPUDIRECT_NONE). */
const char *gpudirect_name(enum gpudirect g);
int gpudirect_parse(const char *word, enum gpudirect *out);

/* The NIC resource of a row that names none: AWS EFA. */
#define TABLE_NIC_DEFAULT "vpc.amazonaws.com/efa"

/*
 * Which rows a variable of an env profile goes to: every row, rows whose
 * NICs are EFA (type_nic_resource() is TABLE_NIC_DEFAULT), or those of
 * them with GPUDirect RDMA.
 */
enum env_rows {
    ENV_ROWS_ALL,
    ENV_ROWS_EFA,
    ENV_ROWS_EFA_GDR,
};

/* The most env variables one row may add, its profile's included. */
#define TABLE_MAX_ENV 16

struct env_var {
    char *name;
    char *value;
    char *why;      /* the reason, printed by `topogate tables` */
    char *versions; /* the images it is for: "aws-ofi-nccl <= 1.5.0" */
    char *source;   /* where that is written: repository + path, or doc */
    enum env_rows rows;  /* a profile's variable: the rows it goes to */
    const char *profile; /* added by this env profile (borrowed), or NULL */
};

/*
 * envProfiles: variables only some images need, added to the rows they
 * fit when the policy's envProfile names the profile (policy/table/env.c).
 */
struct env_profile {
    char *name;
    struct env_var *env;
    size_t n_env;
};

struct instance_type {
    char *name;        /* "p4d.24xlarge" */
    char *accelerator; /* "A100" */
    char *resource;    /* extended resource: "nvidia.com/gpu" */
    int count;         /* accelerators on the node */
    char *memory;      /* per accelerator, a quantity: "40Gi" */
    enum interconnect link;
    int nvlink_gbps; /* per GPU, bidirectional; 0 without NVLink */
    /*
     * How many of the node's RDMA NIC resource a pod may take: the
     * allocatable of nic_resource, or the NICs nic_annotation attaches.
     */
    int efa;
    char *nic_resource;   /* NULL: TABLE_NIC_DEFAULT; see type_nic_resource */
    char *nic_annotation; /* the pod annotation that attaches NICs, or NULL */
    /*
     * nicsNeedEvidence: the platform's default setup advertises no
     * nic_resource (OCI OKE reaches its RDMA NICs by hostNetwork), so it
     * is added only where the cluster view shows nodes that advertise it.
     */
    bool nics_need_evidence;
    enum gpudirect gke_gpudirect; /* gkeGPUDirect, with nic_annotation */
    bool gpudirect_rdma;
    char *host_memory; /* a quantity: "1152Gi" */
    char *shm;         /* /dev/shm sizeLimit to give: "144Gi" */
    uint64_t shm_bytes;
    struct env_var *env;
    size_t n_env;
};

/* "nvswitch" etc.; NULL for an unknown word. */
const char *link_name(enum interconnect link);
int link_parse(const char *word, enum interconnect *out);

/* True where GPUs inside one node talk over NVLink: splitting them hurts. */
bool link_is_nvlink(enum interconnect link);

/*
 * The extended resource a pod requests for the type's RDMA NICs
 * ("vpc.amazonaws.com/efa", "rdma/ib", "nvidia.com/sriov_rdma_vf"), t->efa
 * of them for the whole node. NULL when pods request none: the type has no
 * such NIC, or attaches them by the pod annotation t->nic_annotation (GKE
 * multi-networking), so nothing is patched for them.
 */
const char *type_nic_resource(const struct instance_type *t);

/*
 * What kind of RDMA NIC resource a device plugin's extended resource is:
 * none, NICs (one per interface or virtual function: a count of NICs), or
 * slots of a shared plugin (one slot grants every HCA of the node, so the
 * count, rdmaHcaMax, is not a NIC count and never becomes a limit).
 * The one list of these names is in table.c, with its sources.
 */
enum rdma_class {
    RDMA_NONE,
    RDMA_NICS,
    RDMA_SLOTS,
};

enum rdma_class table_rdma_class(const char *resource);

/* One name of those lists: a pattern, who advertises it, the source. */
struct rdma_name {
    const char *pattern;
    const char *who;
    const char *source;
};

/*
 * The RDMA NIC names (class RDMA_NICS: every RDMA resource, slots
 * included) or, of those, the shared plugins' slots (RDMA_SLOTS), *n of
 * them; static.
 */
const struct rdma_name *table_rdma_names(enum rdma_class class, size_t *n);

/*
 * GB200/GB300 nodes join one NVLink domain across nodes (NVL36/NVL72)
 * through IMEX: p6e-gb200, GKE a4x, ND GB200 v6, the GPU products.
 */
bool type_multinode_nvlink(const struct instance_type *t);

#endif
