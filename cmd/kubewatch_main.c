/*
 * kubewatch_main.c - topogate-kubewatch: the apiserver client in a
 * process of its own, beside topogate (as topogate-certgen is).
 *
 *   topogate-kubewatch [--kubeconfig FILE] [--check | --once | --live-audit]
 *
 * Watches nodes, Kueue's queues, Trainer's runtimes, DRA's objects and
 * NFD's NodeResourceTopologies (kube/kube.c) and writes what it sees to
 * stdout, one JSON object per line, for `serve` to read
 * (clusterview/kubewatch.c):
 *   {"op":"item","res":R,"object":O}        one object of a list of R
 *   {"op":"listed","res":R,"whole":B}       true: the items since the last
 *                                           "listed" are all of R; false:
 *                                           forget them, the list restarts
 *   {"op":"event","res":R,"type":T,"object":O}
 *   {"op":"restart","res":R,"reason":W}
 *   {"op":"state","res":R,"synced":B,"why":W}
 *   {"op":"tick"}                           every 2 s: the helper is alive
 * A list is written an object at a time, as the client reads it: the
 * helper keeps no object after its line is written, so its memory does
 * not grow with the cluster.
 * Objects are cut down to what decisions read (name, namespace, labels,
 * taints, allocatable; Kueue's and Trainer's spec; DRA's: slim_dra();
 * NodeResourceTopology's: slim_nrt()).
 * Without --kubeconfig it is in cluster: the service account's token is
 * read here alone. --check loads the configuration and exits; --once
 * exits when every resource is listed (or found not served), at most
 * 30 s. Exit 0; 1 when the apiserver cannot be used; 2 on a
 * configuration or usage error.
 *
 * --live-audit also watches the GPU pods of training workloads and
 * topogate's PolicyReports (clusterview/liveresources.c: a pod is cut
 * to what decide() reads, one without GPUs is not written), and does
 * the writes serve asks for on stdin (kubewatch_live.c).
 *
 * Why a process: libcurl and what it links (libssh2 -> libcrypto,
 * LDAP, Kerberos) cost the server 3.4 MiB of resident memory when mapped
 * into it, and the token stays out of the process that faces the
 * cluster's pods.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "kube/kube.h"
#include "clusterview/kuberesources.h"
#include "clusterview/liveresources.h"
#include "cmd/kubewatch_live.h"
#include "lib/log.h"

#define ONCE_TIMEOUT_S 30

static const char usage[] =
    "usage: topogate-kubewatch [--kubeconfig FILE] [--check | --once | "
    "--live-audit]\n";

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t settled_cond = PTHREAD_COND_INITIALIZER;
static bool settled[16];
static unsigned ticks;

/* How often the helper says it is alive (clusterview/kubewatch.c gives
 * up on one silent for 30 s). */
#define HEARTBEAT_S 2

/* One line out; a reader that went away ends the helper. flush: at once
 * (the list's items wait for the stdio buffer to fill or the list to
 * end). */
static void
emit_line(cJSON *line, bool flush)
{
    char *text = line ? cJSON_PrintUnformatted(line) : NULL;

    cJSON_Delete(line);
    if (text == NULL) {
        log_warnx("out of memory writing a line: exiting");
        _exit(1);
    }
    if (puts(text) == EOF || (flush && fflush(stdout) == EOF))
        _exit(0); /* serve stopped reading: nothing left to do */
    free(text);
}

static void
emit(cJSON *line)
{
    emit_line(line, true);
}

static cJSON *
line_new(const char *op, const struct kube_resource *r)
{
    cJSON *l = cJSON_CreateObject();

    cJSON_AddStringToObject(l, "op", op);
    cJSON_AddStringToObject(l, "res", r->name);
    return l;
}

static void
copy_member(cJSON *to, const cJSON *from, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, key);

    if (v)
        cJSON_AddItemToObject(to, key, cJSON_Duplicate(v, true));
}

/* A ResourceSlice's device: its name and the attributes the view reads
 * or shows (policy/view/viewdra.c says whose they are), by either form
 * of name: "productName" or "gpu.nvidia.com/productName". */
static cJSON *
slim_device(const cJSON *d)
{
    static const char *const keep[] = {"type",
                                       "productName",
                                       "architecture",
                                       "cliqueID",
                                       "rdma",
                                       "pciDevice",
                                       "resource.kubernetes.io/pcieRoot"};
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(d, "attributes"), *a;
    const cJSON *cap = cJSON_GetObjectItemCaseSensitive(d, "capacity");
    cJSON *out = cJSON_CreateObject(), *oa = cJSON_CreateObject();

    copy_member(out, d, "name");
    cJSON_ArrayForEach(a, attrs)
    {
        const char *k = a->string, *slash = k ? strrchr(k, '/') : NULL;
        for (size_t i = 0; k && i < sizeof(keep) / sizeof(keep[0]); i++)
            if (strcmp(k, keep[i]) == 0 ||
                (slash && strchr(keep[i], '/') == NULL &&
                 strcmp(slash + 1, keep[i]) == 0)) {
                cJSON_AddItemToObject(oa, k, cJSON_Duplicate(a, true));
                break;
            }
    }
    cJSON_AddItemToObject(out, "attributes", oa);
    if (cJSON_GetObjectItemCaseSensitive(cap, "memory")) {
        cJSON *oc = cJSON_CreateObject();
        copy_member(oc, cap, "memory");
        cJSON_AddItemToObject(out, "capacity", oc);
    }
    return out;
}

/* DRA's objects cut down to what the view reads: a slice's node, driver,
 * pool and devices; a class's selectors; a claim template's requests. */
static void
slim_dra(cJSON *out, const char *res, const cJSON *spec)
{
    cJSON *sp = cJSON_CreateObject();

    if (strcmp(res, "resourceslices") == 0) {
        const cJSON *d;
        cJSON *devs = cJSON_CreateArray();
        copy_member(sp, spec, "driver");
        copy_member(sp, spec, "nodeName");
        copy_member(sp, spec, "allNodes");
        copy_member(sp, spec, "pool");
        cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(spec, "devices"))
        {
            cJSON_AddItemToArray(devs, slim_device(d));
        }
        cJSON_AddItemToObject(sp, "devices", devs);
    } else if (strcmp(res, "deviceclasses") == 0) {
        copy_member(sp, spec, "selectors");
    } else {
        const cJSON *inner = cJSON_GetObjectItemCaseSensitive(spec, "spec");
        const cJSON *devices =
            cJSON_GetObjectItemCaseSensitive(inner, "devices");
        cJSON *is = cJSON_CreateObject(), *ds = cJSON_CreateObject();
        copy_member(ds, devices, "requests");
        cJSON_AddItemToObject(is, "devices", ds);
        cJSON_AddItemToObject(sp, "spec", is);
    }
    cJSON_AddItemToObject(out, "spec", sp);
}

/* A NodeResourceTopology cut down to the kubelet's Topology Manager
 * settings and each zone's resource totals. NFD's topology updater
 * writes the attributes "topologyManagerPolicy" and
 * "topologyManagerScope" on v1alpha2 objects, and the deprecated
 * topologyPolicies list, the only one on v1alpha1
 * (kubernetes-sigs/node-feature-discovery 76e6cc8c
 * pkg/nfd-topology-updater/nfd-topology-updater.go,
 * createTopologyAttributes). Left out: the other attributes (the pod
 * fingerprint changes with every pod), zones' costs, and "available",
 * which moves as pods come and go. */
static void
slim_nrt(cJSON *out, const cJSON *obj)
{
    cJSON *attrs = cJSON_CreateArray(), *zones = cJSON_CreateArray();
    const cJSON *a, *z, *res;

    cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(obj, "attributes"))
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(a, "name");
        const char *name = cJSON_IsString(n) ? n->valuestring : "";
        if (strcmp(name, "topologyManagerPolicy") == 0 ||
            strcmp(name, "topologyManagerScope") == 0)
            cJSON_AddItemToArray(attrs, cJSON_Duplicate(a, true));
    }
    cJSON_AddItemToObject(out, "attributes", attrs);
    copy_member(out, obj, "topologyPolicies");
    cJSON_ArrayForEach(z, cJSON_GetObjectItemCaseSensitive(obj, "zones"))
    {
        cJSON *oz = cJSON_CreateObject(), *ors = cJSON_CreateArray();
        copy_member(oz, z, "name");
        copy_member(oz, z, "type");
        copy_member(oz, z, "parent");
        cJSON_ArrayForEach(res,
                           cJSON_GetObjectItemCaseSensitive(z, "resources"))
        {
            cJSON *o = cJSON_CreateObject();
            copy_member(o, res, "name");
            copy_member(o, res, "capacity");
            copy_member(o, res, "allocatable");
            cJSON_AddItemToArray(ors, o);
        }
        cJSON_AddItemToObject(oz, "resources", ors);
        cJSON_AddItemToArray(zones, oz);
    }
    cJSON_AddItemToObject(out, "zones", zones);
}

/* What decisions read of an object, and no more: a Node's status is
 * mostly images and conditions. */
static cJSON *
slim(const struct kube_resource *r, const cJSON *obj)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
    cJSON *out = cJSON_CreateObject(), *m = cJSON_CreateObject();

    copy_member(m, meta, "name");
    copy_member(m, meta, "namespace");
    copy_member(m, meta, "labels");
    cJSON_AddItemToObject(out, "metadata", m);
    copy_member(out, obj, "kind");
    if (strcmp(r->group, "resource.k8s.io") == 0) {
        slim_dra(out, r->name, spec);
    } else if (strcmp(r->group, "topology.node.k8s.io") == 0) {
        slim_nrt(out, obj);
    } else if (cJSON_GetObjectItemCaseSensitive(status, "allocatable")) {
        cJSON *sp = cJSON_CreateObject(), *st = cJSON_CreateObject();
        copy_member(sp, spec, "taints");
        copy_member(st, status, "allocatable");
        cJSON_AddItemToObject(out, "spec", sp);
        cJSON_AddItemToObject(out, "status", st);
    } else {
        copy_member(out, obj, "spec");
    }
    return out;
}

/* A live audit's pod: cut to what decide() reads; NULL when it asks
 * for no GPU (not written at all). Anything else: slim(). */
static cJSON *
slim_any(const struct kube_resource *r, const cJSON *object)
{
    if (strcmp(r->plural, "pods") == 0)
        return live_slim_pod(object);
    return slim(r, object);
}

static void
on_item(void *ctx, const struct kube_resource *r, const cJSON *object)
{
    cJSON *o = slim_any(r, object), *l;

    (void)ctx;
    if (o == NULL)
        return;
    l = line_new("item", r);
    cJSON_AddItemToObject(l, "object", o);
    emit_line(l, false);
}

static void
on_listed(void *ctx, const struct kube_resource *r, bool whole)
{
    cJSON *l = line_new("listed", r);

    (void)ctx;
    cJSON_AddBoolToObject(l, "whole", whole);
    emit(l);
}

static void
on_tick(void *ctx)
{
    (void)ctx;
    if (++ticks % HEARTBEAT_S == 0) {
        cJSON *l = cJSON_CreateObject();

        cJSON_AddStringToObject(l, "op", "tick");
        emit(l);
    }
}

static void
on_event(void *ctx, const struct kube_resource *r, const char *type,
         const cJSON *object)
{
    cJSON *o = slim_any(r, object), *l;

    (void)ctx;
    if (o == NULL)
        return;
    l = line_new("event", r);
    cJSON_AddStringToObject(l, "type", type);
    cJSON_AddItemToObject(l, "object", o);
    emit(l);
}

static void
on_restart(void *ctx, const struct kube_resource *r, const char *reason)
{
    cJSON *l = line_new("restart", r);

    (void)ctx;
    cJSON_AddStringToObject(l, "reason", reason);
    emit(l);
}

static void
on_state(void *ctx, const struct kube_resource *r, bool synced,
         const char *why)
{
    cJSON *l = line_new("state", r);
    int i = kube_resource_index(r->name);

    (void)ctx;
    cJSON_AddBoolToObject(l, "synced", synced);
    cJSON_AddStringToObject(l, "why", why ? why : "");
    emit(l);
    pthread_mutex_lock(&lock);
    if (i >= 0 && (size_t)i < sizeof(settled) / sizeof(settled[0]))
        settled[i] = settled[i] || kube_resource_settled(r, synced, why);
    pthread_cond_broadcast(&settled_cond);
    pthread_mutex_unlock(&lock);
}

static bool
all_settled(void)
{
    size_t n;

    kube_resources(&n);
    for (size_t i = 0; i < n; i++)
        if (!settled[i])
            return false;
    return true;
}

/* --once: until every resource is listed, or the time is up. */
static bool
wait_settled(void)
{
    struct timespec until;
    bool done;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ONCE_TIMEOUT_S;
    pthread_mutex_lock(&lock);
    while (!(done = all_settled()) &&
           pthread_cond_timedwait(&settled_cond, &lock, &until) == 0)
        ;
    done = all_settled();
    pthread_mutex_unlock(&lock);
    return done;
}

int
main(int argc, char **argv)
{
    struct kube_sink sink = {NULL,       on_item,  on_listed, on_event,
                             on_restart, on_state, on_tick};
    const char *kubeconfig = NULL;
    bool check = false, once = false, live = false;
    struct kube_resource *all = NULL;
    struct kube_config cfg;
    struct kube_watch *w;
    const struct kube_resource *resources;
    size_t n;
    char err[512];
    sigset_t set;
    int sig, rc = 0;

    log_init("topogate-kubewatch");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--kubeconfig") == 0 && i + 1 < argc)
            kubeconfig = argv[++i];
        else if (strcmp(argv[i], "--check") == 0)
            check = true;
        else if (strcmp(argv[i], "--once") == 0)
            once = true;
        else if (strcmp(argv[i], "--live-audit") == 0)
            live = true;
        else {
            fputs(usage, stderr);
            return 2;
        }
    }
    if (check + once + live > 1) {
        fputs(usage, stderr);
        return 2;
    }
    if ((kubeconfig ? kube_config_load(kubeconfig, &cfg, err, sizeof(err))
                    : kube_config_in_cluster(&cfg, err, sizeof(err))) != 0) {
        fprintf(stderr, "topogate-kubewatch: %s\n", err);
        return 2;
    }
    if (check) {
        kube_config_free(&cfg);
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    /* Blocked before the watch thread starts, so it inherits the mask. */
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    resources = kube_resources(&n);
    if (live) {
        /* The view's resources, then the live audit's. */
        size_t nl;
        const struct kube_resource *lr = live_resources(&nl);
        if ((all = calloc(n + nl, sizeof(*all))) == NULL) {
            fprintf(stderr, "topogate-kubewatch: out of memory\n");
            kube_config_free(&cfg);
            return 1;
        }
        memcpy(all, resources, n * sizeof(*all));
        memcpy(all + n, lr, nl * sizeof(*all));
        resources = all;
        n += nl;
    }
    w = kube_watch_start(&cfg, resources, n, &sink, err, sizeof(err));
    /* The writes' thread after the watch's: libcurl is set up by then
     * (curl_global_init in kube_watch_start). */
    if (w != NULL && live &&
        kubewatch_live_start(&cfg, emit, err, sizeof(err)) != 0) {
        kube_watch_stop(w);
        w = NULL;
    }
    kube_config_free(&cfg);
    if (w == NULL) {
        fprintf(stderr, "topogate-kubewatch: %s\n", err);
        free(all);
        return 1;
    }
    if (once)
        rc = wait_settled() ? 0 : 1;
    else
        sigwait(&set, &sig);
    kube_watch_stop(w);
    free(all);
    if (once && rc != 0)
        fprintf(stderr, "topogate-kubewatch: not every resource was listed "
                        "within %d s\n",
                ONCE_TIMEOUT_S);
    return rc;
}
