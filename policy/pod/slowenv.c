/*
 * slowenv.c - the env that turns NCCL's fast paths off, by name.
 *
 * The variables and their meaning are NCCL's (docs.nvidia.com/deeplearning/
 * nccl/user-guide/docs/env.html): NCCL_P2P_DISABLE (non-zero: no P2P, so
 * no NVLink or PCIe peer access between GPUs), NCCL_P2P_LEVEL (LOC or 0:
 * P2P never used), NCCL_SHM_DISABLE (non-zero: no shared-memory transport
 * between processes of a node), NCCL_NET (Socket: TCP only, no RDMA
 * plugin or IB), NCCL_IB_DISABLE (non-zero: no IB/RoCE verbs; EFA goes
 * through the aws-ofi-nccl net plugin, which it does not turn off).
 */
#include "policy/pod/slowenv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/k8s/pod.h"
#include "policy/table/table.h"

/* NCCL reads these as integers: anything but 0 turns the path off. */
static bool
set_nonzero(const char *v)
{
    char *end;
    long n;

    if (v == NULL || *v == '\0')
        return false;
    n = strtol(v, &end, 10);
    return *end != '\0' || n != 0;
}

static int
say_var(slowenv_say *say, void *arg, const char *cname, const char *var,
        const char *value, const char *what)
{
    char line[256];

    snprintf(line, sizeof(line), "container '%s' sets %s=%s: %s", cname, var,
             value, what);
    return say(arg, line);
}

int
slowenv_each(const cJSON *c, const struct fast_paths *p, slowenv_say *say,
             void *arg)
{
    const char *cname = json_string(c, "name");
    const char *v;
    char what[128];

    if (cname == NULL)
        cname = "?";
    if (p->gpus >= 2) {
        snprintf(what, sizeof(what),
                 "NCCL stays off P2P (NVLink, PCIe) between the pod's %ld "
                 "GPUs",
                 p->gpus);
        if (set_nonzero(v = pod_env_value(c, "NCCL_P2P_DISABLE")) &&
            say_var(say, arg, cname, "NCCL_P2P_DISABLE", v, what) < 0)
            return -1;
        v = pod_env_value(c, "NCCL_P2P_LEVEL");
        if (v && (strcasecmp(v, "LOC") == 0 || strcmp(v, "0") == 0) &&
            say_var(say, arg, cname, "NCCL_P2P_LEVEL", v, what) < 0)
            return -1;
    }
    if ((p->gpus >= 2 || p->node_peers) &&
        set_nonzero(v = pod_env_value(c, "NCCL_SHM_DISABLE")) &&
        say_var(say, arg, cname, "NCCL_SHM_DISABLE", v,
                "NCCL cannot use shared memory between processes of a node") <
            0)
        return -1;
    if (p->nics == NULL)
        return 0;
    snprintf(what, sizeof(what), "NCCL sends over TCP, not the node's %s NICs",
             p->nics);
    v = pod_env_value(c, "NCCL_NET");
    if (v && strcasecmp(v, "Socket") == 0 &&
        say_var(say, arg, cname, "NCCL_NET", v, what) < 0)
        return -1;
    /* IB verbs are how NCCL reaches rdma/ and rdma-vf NICs, not EFA. */
    if (strstr(p->nics, "rdma") &&
        set_nonzero(v = pod_env_value(c, "NCCL_IB_DISABLE")) &&
        say_var(say, arg, cname, "NCCL_IB_DISABLE", v, what) < 0)
        return -1;
    return 0;
}

bool
slowenv_is_rdma_resource(const char *name)
{
    return table_rdma_class(name) != RDMA_NONE;
}
