/*
 * nodefacts.c - what the labels of a kind of node say that the table
 * cannot (issue 45 point 5).
 *
 * GB200/GB300 and their PCIe-attached RDMA NICs (EFA on p6e-gb200, the
 * ConnectX NICs elsewhere): up to R580 the NVIDIA driver lets such a NIC
 * attach GPU memory by dma-buf only with NVreg_GrdmaPciTopoCheckOverride=1;
 * without it NCCL silently falls back to sockets (NVIDIA/aicr
 * validators/performance/nccl_preflight_nvreg.go, and aicr#2607, "up to
 * R580 requires NVreg_GrdmaPciTopoCheckOverride=1 ... R595 removed that
 * parameter"). R595 drops the parameter for a topology check (the NIC in
 * an IOMMU group, or GPU and NIC under one root port). That R595 is
 * "backward incompatible with P6e-GB200 EFA" is NVIDIA's 595.91.07
 * release notes as AICR quotes and links them (aicr#2383, aicr#2439,
 * aicr#2459); the notes themselves were not read, so the warning names
 * who quotes them. AICR measured NCCL aborting on p6e-gb300 under
 * 595.91.07 and holds its driver at 580. The sources disagree with the
 * reading that R595 and later need no override and just work: both hold
 * below R595, and at R595 and later on EFA the sources say it breaks,
 * so that is warned too. The module parameter itself is not in any
 * label: the warning says what to check.
 *
 * The driver version is GPU Feature Discovery's
 * nvidia.com/cuda.driver-version.major, or its deprecated
 * nvidia.com/cuda.driver.major (NVIDIA/k8s-device-plugin
 * docs/gpu-feature-discovery/README.md, the label table).
 */
#include "policy/pod/nodefacts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/k8s/match.h"

#define DRIVER_NO_OVERRIDE 595 /* the first branch without the parameter */

/* The GFD driver major of a kind, or -1 when no label says it. */
static long
driver_major(const struct node_kind *k)
{
    static const char *const keys[] = {"nvidia.com/cuda.driver-version.major",
                                       "nvidia.com/cuda.driver.major"};

    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *v = label_get(&k->set, keys[i]);
        char *end;
        long n;

        if (v == NULL)
            continue;
        n = strtol(v, &end, 10);
        if (end != v && *end == '\0' && n > 0 && n < 100000)
            return n;
    }
    return -1;
}

int
nodefacts_kind(const struct node_kind *k, const struct instance_type *row,
               nodefacts_say *say, void *arg)
{
    const char *nic = type_nic_resource(row);
    long major;
    char s[160];
    int rc;

    /* GB200/GB300 whose RDMA NICs pods ask for by a resource. */
    if (!type_multinode_nvlink(row) || nic == NULL ||
        (major = driver_major(k)) < 0)
        return 0;
    if (major < DRIVER_NO_OVERRIDE) {
        snprintf(s, sizeof(s),
                 "%s: NVIDIA driver R%ld; GPUDirect RDMA over PCIe NICs "
                 "needs NVreg_GrdmaPciTopoCheckOverride=1",
                 row->name, major);
        if ((rc = say(arg, s)) != 0)
            return rc;
        return say(arg, "without it NCCL falls back to sockets; check "
                        "/proc/driver/nvidia/params on the nodes");
    }
    if (strcmp(nic, TABLE_NIC_DEFAULT) != 0)
        return 0;
    snprintf(s, sizeof(s),
             "%s: NVIDIA driver R%ld; R595's notes, as quoted by "
             "NVIDIA/aicr, call it incompatible with P6e-GB200 EFA",
             row->name, major);
    return say(arg, s);
}
