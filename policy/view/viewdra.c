/*
 * viewdra.c - see viewdra.h.
 *
 * The facts, by source:
 * - A ResourceSlice (resource.k8s.io/v1 ResourceSliceSpec) names its
 *   driver, its pool {name, generation, resourceSliceCount} and either
 *   one nodeName or a nodeSelector, allNodes or perDeviceNodeSelection;
 *   a pool's slices of an older generation are stale ("the pool's
 *   generation ... consumers must only use the slices with the highest
 *   generation number", ResourcePool.generation). Each device has a
 *   name, attributes (one typed value each: string, int, bool,
 *   version) and capacity. An attribute name without a domain is the
 *   driver's own.
 * - The NVIDIA driver publishes per whole GPU "type": "gpu" (MIG slices
 *   "mig", VFIO passthrough "vfio"), "productName" (the NVML name,
 *   "NVIDIA H100 80GB HBM3"), "architecture", "brand", "uuid",
 *   "cudaComputeCapability", "driverVersion", the standard
 *   resource.kubernetes.io/pcieRoot and pciBusID, and capacity "memory"
 *   (NVIDIA/k8s-dra-driver-gpu 22407113 cmd/gpu-kubelet-plugin/
 *   deviceinfo.go, GpuInfo.Attributes; the EKS slice in
 *   kubernetes-sigs/dranet examples/aws_eks_examples/gpu-efa/
 *   resourceslice-gpu.yaml shows them as published). It publishes no
 *   NVLink clique: ComputeDomain cliques are a pod label and env of the
 *   ComputeDomain daemon (cmd/compute-domain-controller/computedomain.go
 *   computeDomainCliqueLabelKey), not a device attribute, so the view
 *   takes none from slices.
 * - Its DeviceClasses select with CEL: gpu.nvidia.com is
 *   "device.driver == 'gpu.nvidia.com' &&
 *   device.attributes['gpu.nvidia.com'].type == 'gpu'", mig.nvidia.com
 *   the same with 'mig', compute-domain-default-channel.nvidia.com
 *   driver 'compute-domain.nvidia.com' and type 'channel'
 *   (deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-*.yaml).
 * - DRANET (driver "dra.net", AWS's EFA DRA driver) publishes NICs with
 *   dra.net/rdma true for RDMA ones, dra.net/pciDevice "Elastic Fabric
 *   Adapter (EFA)" for EFA (kubernetes-sigs/dranet f258477c
 *   pkg/apis/attributes.go; examples/aws_eks_examples/gpu-efa/
 *   resourceslice-dranet.yaml, device-class.yaml).
 * - GFD writes the NVML name into nvidia.com/gpu.product with the
 *   characters outside [A-Za-z0-9-_. ] dropped and runs of spaces made
 *   one '-' (NVIDIA/k8s-device-plugin internal/lm/resource.go; shared
 *   research cluster-view-facts.md 1.2): the product table's label
 *   values are in that form.
 */
#include "policy/view/viewdra.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/k8s/pod.h"

/* An attribute of a device by its name, qualified by driver or not. */
static const cJSON *
attribute(const cJSON *device, const char *driver, const char *name)
{
    const cJSON *attrs = json_get(device, "attributes"), *a;
    size_t dl = strlen(driver);

    if ((a = json_get(attrs, name)) != NULL)
        return a;
    cJSON_ArrayForEach(a, attrs)
    {
        const char *k = a->string;
        if (k && strncmp(k, driver, dl) == 0 && k[dl] == '/' &&
            strcmp(k + dl + 1, name) == 0)
            return a;
    }
    return NULL;
}

static const char *
attribute_string(const cJSON *device, const char *driver, const char *name)
{
    return json_string(attribute(device, driver, name), "string");
}

cJSON *
viewdra_slice_summary(const cJSON *slice, bool *per_node)
{
    const cJSON *spec = json_get(slice, "spec"), *pool, *d;
    const char *driver = json_string(spec, "driver");
    const char *node = json_string(spec, "nodeName");
    const char *product = NULL;
    bool mixed = false;
    long gpus = 0, nics = 0;
    cJSON *out;

    *per_node = node != NULL && node[0] != '\0' && driver != NULL;
    if (!*per_node)
        return NULL;
    pool = json_get(spec, "pool");
    cJSON_ArrayForEach(d, json_get(spec, "devices"))
    {
        if (strcmp(driver, DRA_DRIVER_GPU) == 0) {
            const char *type = attribute_string(d, driver, "type");
            const char *name = attribute_string(d, driver, "productName");
            if (type == NULL || strcmp(type, "gpu") != 0)
                continue; /* a MIG slice or a VFIO GPU: not a GPU here */
            gpus++;
            if (name == NULL || (product && strcmp(product, name) != 0))
                mixed = true;
            else
                product = name;
        } else if (strcmp(driver, DRA_DRIVER_NET) == 0) {
            if (cJSON_IsTrue(json_get(attribute(d, driver, "rdma"), "bool")))
                nics++;
        }
    }
    if ((out = cJSON_CreateObject()) == NULL)
        return NULL;
    cJSON_AddStringToObject(out, "node", node);
    cJSON_AddStringToObject(out, "driver", driver);
    cJSON_AddStringToObject(
        out, "pool",
        json_string(pool, "name") ? json_string(pool, "name") : "");
    cJSON_AddNumberToObject(out, "generation",
                            cJSON_IsNumber(json_get(pool, "generation"))
                                ? json_get(pool, "generation")->valuedouble
                                : 0);
    cJSON_AddNumberToObject(out, "gpus", (double)gpus);
    if (product && !mixed)
        cJSON_AddStringToObject(out, "product", product);
    else if (gpus > 0)
        cJSON_AddBoolToObject(out, "mixed", true);
    cJSON_AddNumberToObject(out, "nics", (double)nics);
    return out;
}

/* The newest generation of a driver's pool among the node's slices. */
static double
newest(const cJSON *slices, const char *node, const char *driver,
       const char *pool)
{
    const cJSON *s;
    double g = 0;

    cJSON_ArrayForEach(s, slices)
    {
        const cJSON *gen = json_get(s, "generation");
        if (strcmp(json_string(s, "node"), node) == 0 &&
            strcmp(json_string(s, "driver"), driver) == 0 &&
            strcmp(json_string(s, "pool"), pool) == 0 && gen &&
            gen->valuedouble > g)
            g = gen->valuedouble;
    }
    return g;
}

int
viewdra_node(const cJSON *slices, const char *node, struct dra_devices *out)
{
    const cJSON *s;
    const char *product = NULL;
    bool mixed = false;

    memset(out, 0, sizeof(*out));
    cJSON_ArrayForEach(s, slices)
    {
        const char *sn = json_string(s, "node"), *p;
        long gpus = (long)cJSON_GetNumberValue(json_get(s, "gpus"));
        if (sn == NULL || strcmp(sn, node) != 0 ||
            cJSON_GetNumberValue(json_get(s, "generation")) <
                newest(slices, node, json_string(s, "driver"),
                       json_string(s, "pool")))
            continue;
        out->gpus += gpus;
        out->nics += (long)cJSON_GetNumberValue(json_get(s, "nics"));
        if (gpus == 0)
            continue;
        p = json_string(s, "product");
        if (p == NULL || (product && strcmp(product, p) != 0))
            mixed = true;
        else
            product = p;
    }
    if (product && !mixed) {
        size_t len = strlen(product) + 1;
        if ((out->product = malloc(len)) == NULL)
            return -1;
        viewdra_gfd_product(product, out->product, len);
    }
    return 0;
}

void
viewdra_gfd_product(const char *name, char *out, size_t len)
{
    size_t n = 0;
    bool space = false;

    if (len == 0)
        return;
    for (; *name && n + 1 < len; name++) {
        unsigned char c = (unsigned char)*name;
        if (c == ' ') {
            space = n > 0;
            continue;
        }
        if (!isalnum(c) && c != '-' && c != '_' && c != '.')
            continue;
        if (space && n + 2 >= len)
            break; /* no room for the '-' and what follows it */
        if (space)
            out[n++] = '-';
        space = false;
        out[n++] = (char)c;
    }
    out[n] = '\0';
}

/* --- DeviceClass selectors ---------------------------------------------- */

/* A quoted CEL string at *p ('x' or "x") into out; the end, or NULL. */
static const char *
quoted(const char *p, char *out, size_t len)
{
    char q = *p;
    const char *end;

    if (q != '\'' && q != '"')
        return NULL;
    if ((end = strchr(p + 1, q)) == NULL || (size_t)(end - p - 1) >= len)
        return NULL;
    memcpy(out, p + 1, (size_t)(end - p - 1));
    out[end - p - 1] = '\0';
    return end + 1;
}

static const char *
skip_space(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* "lhs == 'v'" with lhs at the start of t: v into out. */
static bool
equals(const char *t, const char *lhs, char *out, size_t len)
{
    size_t n = strlen(lhs);
    const char *p;

    if (strncmp(t, lhs, n) != 0)
        return false;
    p = skip_space(t + n);
    if (strncmp(p, "==", 2) != 0)
        return false;
    p = quoted(skip_space(p + 2), out, len);
    return p && *skip_space(p) == '\0';
}

struct selector_read {
    char driver[128];
    char type[128];
    char type_domain[128];
    int extra; /* conjuncts of another form */
    bool unread;
};

/* One conjunct, trimmed, of the forms the driver's classes use. */
static void
conjunct(const char *t, struct selector_read *r)
{
    char domain[128], value[128];
    const char *p;

    if (equals(t, "device.driver", value, sizeof(value))) {
        if (r->driver[0] && strcmp(r->driver, value) != 0)
            r->unread = true; /* two drivers: selects nothing */
        snprintf(r->driver, sizeof(r->driver), "%s", value);
        return;
    }
    if (strncmp(t, "device.attributes[", 18) == 0 &&
        (p = quoted(t + 18, domain, sizeof(domain))) != NULL &&
        strncmp(p, "].type", 6) == 0 &&
        equals(p + 6, "", value, sizeof(value))) {
        snprintf(r->type, sizeof(r->type), "%s", value);
        snprintf(r->type_domain, sizeof(r->type_domain), "%s", domain);
        return;
    }
    r->extra++;
}

/* Splits an expression on the && outside quotes and parentheses. */
static void
expression(const char *e, struct selector_read *r)
{
    char part[1024];
    size_t n = 0;
    int depth = 0;
    char q = 0;

    for (const char *p = e;; p++) {
        bool end = *p == '\0';
        if (!end && q) {
            q = *p == q ? 0 : q;
        } else if (!end && (*p == '\'' || *p == '"')) {
            q = *p;
        } else if (!end && *p == '(') {
            depth++;
        } else if (!end && *p == ')') {
            depth--;
        } else if (!end && depth == 0 && p[0] == '|' && p[1] == '|') {
            r->unread = true; /* an alternative: not one class of devices */
        }
        if (end || (!q && depth == 0 && p[0] == '&' && p[1] == '&')) {
            while (n > 0 && isspace((unsigned char)part[n - 1]))
                n--;
            part[n] = '\0';
            const char *t = skip_space(part);
            if (*t)
                conjunct(t, r);
            n = 0;
            if (end)
                break;
            p++;
            continue;
        }
        if (n + 1 < sizeof(part))
            part[n++] = *p;
        else
            r->unread = true;
    }
    if (q || depth != 0)
        r->unread = true;
}

enum dra_class
viewdra_class(const cJSON *device_class)
{
    struct selector_read r = {0};
    const cJSON *s;

    cJSON_ArrayForEach(s, json_get(json_get(device_class, "spec"), "selectors"))
    {
        const char *e = json_string(json_get(s, "cel"), "expression");
        if (e == NULL)
            r.unread = true;
        else
            expression(e, &r);
    }
    if (r.unread || r.driver[0] == '\0' ||
        (r.type[0] && strcmp(r.type_domain, r.driver) != 0))
        return DRA_CLASS_UNREAD;
    if (strcmp(r.driver, DRA_DRIVER_GPU) == 0) {
        if (r.type[0] == '\0')
            return DRA_CLASS_UNREAD; /* GPUs, MIG slices or VFIO alike */
        if (strcmp(r.type, "gpu") != 0)
            return DRA_CLASS_OTHER;
        return r.extra ? DRA_CLASS_GPU_NARROWED : DRA_CLASS_GPU;
    }
    if (strcmp(r.driver, DRA_DRIVER_CHANNEL) == 0)
        return DRA_CLASS_CHANNEL;
    if (strcmp(r.driver, DRA_DRIVER_NET) == 0)
        return DRA_CLASS_NIC;
    return DRA_CLASS_OTHER;
}

const char *
viewdra_class_name(enum dra_class c)
{
    switch (c) {
    case DRA_CLASS_GPU:
        return "gpu";
    case DRA_CLASS_GPU_NARROWED:
        return "gpu-narrowed";
    case DRA_CLASS_NIC:
        return "nic";
    case DRA_CLASS_CHANNEL:
        return "channel";
    case DRA_CLASS_OTHER:
        return "other";
    default:
        return "unread";
    }
}
