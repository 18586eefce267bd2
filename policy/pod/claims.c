/*
 * claims.c - see claims.h.
 *
 * What a request asks for, by its DeviceClass (viewdra_class()): whole
 * GPUs for the NVIDIA driver's gpu.nvidia.com shape, counted as written
 * (count, default 1, for allocationMode ExactCount; "All" is every
 * matching device of the node: resource.k8s.io/v1 ExactDeviceRequest);
 * NICs for DRANET's; an IMEX channel for the ComputeDomain driver's;
 * nothing for another driver's or MIG. A class the view does not hold,
 * or one whose selectors it cannot read, says nothing: no GPUs counted,
 * and the pod is told. A request's own selectors, a class that narrows
 * by what topogate does not read, or firstAvailable alternatives that
 * differ, count but are no evidence: the scheduler may pick nodes or
 * devices topogate cannot tell.
 */
#include "policy/pod/claims.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/k8s/pod.h"
#include "policy/view/viewdra.h"

/* One request or alternative: its class's kind, count, mode. */
struct ask {
    enum dra_class cls;
    const char *class_name;
    long count;
    bool all;
    bool selectors;
};

static void
ask_read(const struct view *v, const cJSON *r, struct ask *a)
{
    const char *mode = json_string(r, "allocationMode");
    const cJSON *count = json_get(r, "count");

    memset(a, 0, sizeof(*a));
    a->class_name = json_string(r, "deviceClassName");
    a->cls = viewdra_class(view_device_class(v, a->class_name));
    a->all = mode && strcmp(mode, "All") == 0;
    a->count = cJSON_IsNumber(count) && count->valuedouble >= 1
                   ? (long)count->valuedouble
                   : 1;
    a->selectors = cJSON_GetArraySize(json_get(r, "selectors")) > 0;
}

static bool
is_gpu(const struct ask *a)
{
    return a->cls == DRA_CLASS_GPU || a->cls == DRA_CLASS_GPU_NARROWED;
}

/* The reason, once: the first one found is the one said. */
__attribute__((format(printf, 2, 0))) static void
why(struct workload *w, const char *fmt, va_list ap)
{
    if (w->claim_why[0] == '\0')
        vsnprintf(w->claim_why, sizeof(w->claim_why), fmt, ap);
}

__attribute__((format(printf, 3, 4))) static void
unknown(struct workload *w, const char *claim, const char *fmt, ...)
{
    va_list ap;

    if (w->claim_unknown != NULL)
        return;
    w->claim_unknown = claim;
    w->claim_why[0] = '\0'; /* the unknown claim is what is said */
    va_start(ap, fmt);
    why(w, fmt, ap);
    va_end(ap);
}

__attribute__((format(printf, 2, 3))) static void
weak(struct workload *w, const char *fmt, ...)
{
    va_list ap;

    if (w->claim_weak || w->claim_unknown != NULL)
        return;
    va_start(ap, fmt);
    why(w, fmt, ap);
    va_end(ap);
    w->claim_weak = true;
}

/* One request of template tname. */
static void
request_read(const struct view *v, const cJSON *req, const char *claim,
             const char *tname, struct workload *w)
{
    const char *name = json_string(req, "name");
    const cJSON *alts = json_get(req, "firstAvailable"), *alt;
    struct ask a, b;
    int n = 0;

    if (cJSON_IsArray(alts)) {
        bool same = true;
        cJSON_ArrayForEach(alt, alts)
        {
            ask_read(v, alt, n == 0 ? &a : &b);
            if (n++ > 0 && (b.cls != a.cls || b.all != a.all ||
                            b.count != a.count || b.selectors))
                same = false;
        }
        if (n == 0)
            return;
        if (is_gpu(&a) && !same)
            weak(w,
                 "template '%s' request '%s': its firstAvailable "
                 "alternatives differ",
                 tname, name ? name : "?");
    } else {
        ask_read(v, json_get(req, "exactly"), &a);
    }
    switch (a.cls) {
    case DRA_CLASS_GPU:
    case DRA_CLASS_GPU_NARROWED:
        if (a.all)
            w->claim_all = true;
        else
            w->claim_gpus += a.count;
        if (w->claim_requests++ == 0) {
            w->claim_template = tname;
            w->claim_request = name;
        }
        if (a.selectors)
            weak(w,
                 "template '%s' request '%s' has selectors topogate does "
                 "not read",
                 tname, name ? name : "?");
        else if (a.cls == DRA_CLASS_GPU_NARROWED)
            weak(w, "DeviceClass '%s' has a selector topogate does not read",
                 a.class_name);
        break;
    case DRA_CLASS_NIC:
        w->claim_nics = tname;
        break;
    case DRA_CLASS_CHANNEL:
        w->cd_channel = true;
        break;
    case DRA_CLASS_OTHER:
        break;
    default:
        if (view_device_class(v, a.class_name) == NULL)
            unknown(w, claim, "DeviceClass '%s' is not in the cluster view",
                    a.class_name ? a.class_name : "?");
        else
            unknown(w, claim,
                    "its DeviceClass '%s' has selectors topogate cannot read",
                    a.class_name);
    }
}

void
claims_read(const struct view *v, const char *ns, const cJSON *pod,
            struct workload *w)
{
    const cJSON *claim, *req;

    if (w->owner == OWNER_NONE || w->launcher)
        return;
    cJSON_ArrayForEach(claim, json_get(json_get(pod, "spec"), "resourceClaims"))
    {
        const char *name = json_string(claim, "name");
        const char *tname = json_string(claim, "resourceClaimTemplateName");
        const cJSON *t;

        if (workload_channel_claim(claim))
            continue;
        name = name ? name : "(unnamed)";
        if (tname == NULL) {
            const char *rc = json_string(claim, "resourceClaimName");
            unknown(w, name, "ResourceClaim '%s' is not in the cluster view",
                    rc ? rc : "?");
            continue;
        }
        if ((t = view_claim_template(v, ns, tname)) == NULL) {
            unknown(w, name,
                    "ResourceClaimTemplate '%s' is not in the cluster view",
                    tname);
            continue;
        }
        cJSON_ArrayForEach(
            req,
            json_get(json_get(json_get(json_get(t, "spec"), "spec"), "devices"),
                     "requests"))
        {
            request_read(v, req, name, tname, w);
        }
    }
    if (w->claim_gpus == 0 && !w->claim_all)
        return;
    /* GPUs counted beside a claim the view cannot read, which may hold
     * more: the count is a guess. */
    if (w->claim_unknown)
        w->claim_weak = true;
    w->gpus += w->claim_gpus;
    /* All: the node's count, known once the candidates are (decide.c);
     * one GPU at least until then. */
    if (w->gpus == 0)
        w->gpus = 1;
    w->any_gpu = true;
    if (w->procs_from_gpus && w->gpus > 0)
        w->procs = w->gpus;
}

void
claims_fix(const struct workload *w, long per, char *out, size_t len)
{
    if (per <= 0 && w->claim_requests == 1)
        snprintf(out, len,
                 "set count (or allocationMode: All) in "
                 "ResourceClaimTemplate '%s' request '%s' to that count",
                 w->claim_template, w->claim_request ? w->claim_request : "?");
    else if (per <= 0)
        snprintf(out, len,
                 "claim that count of GPUs per pod (count, or "
                 "allocationMode: All, in its ResourceClaimTemplates)");
    else if (w->claim_requests == 1)
        snprintf(out, len,
                 "set count: %ld (or allocationMode: All) in "
                 "ResourceClaimTemplate '%s' request '%s'",
                 per, w->claim_template,
                 w->claim_request ? w->claim_request : "?");
    else
        snprintf(out, len,
                 "claim %ld GPUs per pod (count, or allocationMode: All, "
                 "in its ResourceClaimTemplates)",
                 per);
}
