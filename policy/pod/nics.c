/*
 * nics.c - which RDMA NICs a governed pod may be given (DESIGN.md, "A
 * resource ... is added or raised only when every node the pod can land
 * on advertises it"; issue 43).
 *
 * A NIC resource beside one the pod already asks for under another name
 * (OCI's nvidia.com/rdma-vf, a shared plugin's rdma/shared_ib) asks every
 * node for both, and one that some candidate node does not advertise in
 * allocatable (EKS with DRANET, AKS on the shared plugin) leaves the pod
 * Pending. Which names are RDMA, and which count slots, is table.h's.
 */
#include "policy/pod/nics.h"

#include <string.h>

#include "policy/k8s/pod.h"
#include "policy/kinds/workload.h"
#include "policy/table/table.h"

/* A row's env, its profile's included, fits the target's list whole. */
_Static_assert(TABLE_MAX_ENV <= TARGET_MAX_ENV,
               "the loader lets a row carry more env than a target holds");

/*
 * An RDMA resource (table_rdma_class()) the pod asks for under a name
 * other than nic, in the limits or requests of any container; or NULL.
 * With same, nic itself, where the pod asks for it.
 */
static const char *
rdma_asked(const cJSON *pod, const char *nic, bool same)
{
    static const char *const lists[] = {"containers", "initContainers"};
    static const char *const maps[] = {"limits", "requests"};
    const cJSON *spec = json_get(pod, "spec"), *c, *r;

    for (size_t l = 0; l < 2; l++) {
        cJSON_ArrayForEach(c, json_get(spec, lists[l]))
        {
            const cJSON *res = json_get(c, "resources");
            for (size_t k = 0; k < 2; k++) {
                cJSON_ArrayForEach(r, json_get(res, maps[k]))
                {
                    if (r->string && same && strcmp(r->string, nic) == 0)
                        return r->string;
                    if (r->string && !same && strcmp(r->string, nic) != 0 &&
                        table_rdma_class(r->string) != RDMA_NONE)
                        return r->string;
                }
            }
        }
    }
    return NULL;
}

/*
 * How a hostNetwork pod reaches the host's RDMA NICs without a device
 * plugin: a privileged container sees every /dev/infiniband device, and
 * a hostPath volume can mount them (oci-hpc-oke's nccl-tests MPIJobs do
 * both). NULL when it does not.
 */
static const char *
host_rdma(const cJSON *spec)
{
    const cJSON *c, *v;

    if (!cJSON_IsTrue(json_get(spec, "hostNetwork")))
        return NULL;
    cJSON_ArrayForEach(c, json_get(spec, "containers"))
    {
        if (cJSON_IsTrue(
                json_get(json_get(c, "securityContext"), "privileged")))
            return "privileged";
    }
    cJSON_ArrayForEach(v, json_get(spec, "volumes"))
    {
        const char *path = json_string(json_get(v, "hostPath"), "path");
        if (path && strncmp(path, "/dev/infiniband", 15) == 0)
            return "/dev/infiniband";
    }
    return NULL;
}

/*
 * A DRA claim other than a ComputeDomain channel: on clusters where NICs
 * are DRA devices (AWS's EFA DRA driver, DRANET) the claim gives them and
 * the node has no NIC resource to ask. The pod alone does not say which
 * devices a claim's template asks for; the claim's name, or NULL.
 */
static const char *
other_claim(const cJSON *spec)
{
    const cJSON *claim;

    cJSON_ArrayForEach(claim, json_get(spec, "resourceClaims"))
    {
        if (!workload_channel_claim(claim))
            return json_string(claim, "name") ? json_string(claim, "name")
                                              : "(unnamed)";
    }
    return NULL;
}

void
nics_narrow(struct target *t, const cJSON *pod, long fewest)
{
    if (t->nic == NULL || t->efa == 0)
        return;
    t->efa_held = t->efa;
    if ((t->nic_why = rdma_asked(pod, t->nic, false)) != NULL) {
        t->nic_hold = NIC_OTHER;
        return;
    }
    if ((t->nic_why = host_rdma(json_get(pod, "spec"))) != NULL) {
        t->nic_hold = NIC_HOST;
        return;
    }
    /* Nodes that all advertise t->nic have it from a device plugin, as
     * has a pod that asks for it; else a claim may be the NICs. */
    if (fewest <= 0 && !rdma_asked(pod, t->nic, true) &&
        (t->nic_why = other_claim(json_get(pod, "spec"))) != NULL) {
        t->nic_hold = NIC_CLAIM;
        t->efa = 0;
        return;
    }
    if (fewest < 0) {
        /* No node known (none yet, no view): the table's count, unless
         * the platform's default setup advertises no such resource
         * (nicsNeedEvidence: OKE reaches its RDMA NICs by hostNetwork).
         * A pod that asks for it itself knows its nodes. */
        if (t->nics_need_evidence && !rdma_asked(pod, t->nic, true)) {
            t->nic_hold = NIC_UNSEEN;
            t->efa = 0;
        }
        return;
    }
    if (fewest == 0) {
        t->nic_hold = NIC_NODES;
        t->efa = 0; /* no NICs on some: no toleration, no FI_* env */
    } else if (table_rdma_class(t->nic) != RDMA_SLOTS) {
        /* Karpenter and EKS Auto Mode may attach fewer EFA than the type
         * has: the nodes' allocatable wins. A slot count is no NIC
         * count: the policy's stands. */
        t->efa = (int)fewest;
    }
}
