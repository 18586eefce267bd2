/*
 * kubewatch.c - see kubewatch.h. Every callback here runs on kube.c's
 * one watch thread, which owns the index: only the built views cross to
 * the request threads, through server_set_view().
 */
#include "webhook/kubewatch.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy/view.h"
#include "webhook/kube.h"
#include "webhook/log.h"
#include "webhook/metrics.h"
#include "webhook/server.h"

static const char *const core_v1[] = {"v1", NULL};
static const char *const kueue_versions[] = {"v1beta2", "v1beta1", NULL};

/* What the view is made of; the kinds name them for the index. */
static const struct kube_resource resources[] = {
    {"nodes", "", core_v1, "nodes", false},
    {"resourceflavors", "kueue.x-k8s.io", kueue_versions, "resourceflavors",
     true},
    {"clusterqueues", "kueue.x-k8s.io", kueue_versions, "clusterqueues", true},
    {"localqueues", "kueue.x-k8s.io", kueue_versions, "localqueues", true},
};
static const char *const kinds[] = {"Node", "ResourceFlavor", "ClusterQueue",
                                    "LocalQueue"};
#define N_RESOURCES (sizeof(resources) / sizeof(resources[0]))

const struct kube_resource *
kubewatch_resources(size_t *n)
{
    *n = N_RESOURCES;
    return resources;
}

/* A view is built at most this often, however fast nodes change. */
#define BUILD_INTERVAL_S 1

struct kubewatch {
    struct kube_config cfg;
    struct kube_watch *watch;
    struct view_index *index;
    struct server *srv; /* NULL: list once, for `topogate nodes` */
    struct metrics *metrics;
    bool dirty;
    bool synced[N_RESOURCES];
    bool settled[N_RESOURCES]; /* listed, or found not served */
    time_t built;
    bool failed;          /* out of memory in the index: logged */
    bool too_many;        /* the last view had too many kinds: logged once */
    pthread_mutex_t lock; /* list_once only: settled[] */
    pthread_cond_t changed;
};

static size_t
resource_index(const struct kube_resource *r)
{
    for (size_t i = 0; i < N_RESOURCES; i++)
        if (strcmp(resources[i].name, r->name) == 0)
            return i;
    return 0;
}

static void
on_replace(void *ctx, const struct kube_resource *r, const cJSON *items)
{
    struct kubewatch *w = ctx;

    if (view_index_replace(w->index, kinds[resource_index(r)], items) < 0) {
        log_warnx("cluster view: out of memory reading %s", r->name);
        w->failed = true;
    }
    w->dirty = true;
}

static void
on_event(void *ctx, const struct kube_resource *r, const char *type,
         const cJSON *obj)
{
    struct kubewatch *w = ctx;
    const char *kind = kinds[resource_index(r)];
    bool node = strcmp(kind, "Node") == 0;
    int rc;

    if (strcmp(type, "DELETED") == 0)
        rc = node ? view_index_del_node(w->index, obj)
                  : view_index_del_kueue(w->index, kind, obj);
    else
        rc = node ? view_index_put_node(w->index, obj)
                  : view_index_put_kueue(w->index, kind, obj);
    if (rc < 0) {
        log_warnx("cluster view: out of memory reading %s", r->name);
        w->failed = true;
    }
    if (rc > 0)
        w->dirty = true;
}

static void
on_restart(void *ctx, const struct kube_resource *r, const char *reason)
{
    struct kubewatch *w = ctx;

    (void)r;
    if (w->metrics)
        metrics_watch_restart(w->metrics, reason);
}

static bool
all_synced(const struct kubewatch *w)
{
    for (size_t i = 0; i < N_RESOURCES; i++)
        if (!w->synced[i] && !(resources[i].optional && w->settled[i]))
            return false;
    return true;
}

static void
on_state(void *ctx, const struct kube_resource *r, bool synced, const char *why)
{
    struct kubewatch *w = ctx;
    size_t i = resource_index(r);

    pthread_mutex_lock(&w->lock);
    w->synced[i] = synced;
    /* An optional resource that is not served is as listed as it gets. */
    w->settled[i] =
        synced || (r->optional && why &&
                   (strstr(why, "not served") || strstr(why, "forbidden")));
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
    w->dirty = true; /* the synced gauge */
}

/* At most once a second: a new view, if anything decisions read changed. */
static void
on_tick(void *ctx)
{
    struct kubewatch *w = ctx;
    time_t now = time(NULL);
    struct view *v;

    if (w->srv == NULL || !w->dirty || now - w->built < BUILD_INTERVAL_S)
        return;
    if ((v = view_build(w->index)) == NULL) {
        log_warnx("cluster view: out of memory building the view");
        return;
    }
    if (v->too_many != w->too_many && (w->too_many = v->too_many))
        log_warnx("cluster view: more than %d kinds of GPU node; a per-node "
                  "label is likely: decisions fall back to pins",
                  VIEW_KINDS_MAX);
    server_set_view(w->srv, v);
    if (w->metrics)
        metrics_set_view(w->metrics, v->n_nodes, v->n_kinds, all_synced(w),
                         (int64_t)now);
    log_debug("cluster view: %zu GPU nodes of %zu kinds", v->n_nodes,
              v->n_kinds);
    view_unref(v);
    w->built = now;
    w->dirty = false;
}

static int
config_load(const char *kubeconfig, struct kube_config *c, char *err,
            size_t err_len)
{
    memset(c, 0, sizeof(*c));
    return kubeconfig ? kube_config_load(kubeconfig, c, err, err_len)
                      : kube_config_in_cluster(c, err, err_len);
}

static struct kubewatch *
watch_new(const char *kubeconfig, char *err, size_t err_len)
{
    struct kubewatch *w = calloc(1, sizeof(*w));

    if (w == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->changed, NULL);
    if (config_load(kubeconfig, &w->cfg, err, err_len) < 0 ||
        (w->index = view_index_new()) == NULL) {
        if (err[0] == '\0')
            snprintf(err, err_len, "out of memory");
        kubewatch_stop(w);
        return NULL;
    }
    return w;
}

static int
watch_begin(struct kubewatch *w, char *err, size_t err_len)
{
    const struct kube_sink sink = {
        .ctx = w,
        .replace = on_replace,
        .event = on_event,
        .restart = on_restart,
        .state = on_state,
        .tick = on_tick,
    };

    w->watch =
        kube_watch_start(&w->cfg, resources, N_RESOURCES, &sink, err, err_len);
    return w->watch ? 0 : -1;
}

struct kubewatch *
kubewatch_start(const char *kubeconfig, struct server *srv, struct metrics *m,
                char *err, size_t err_len)
{
    struct kubewatch *w;

    err[0] = '\0';
    if ((w = watch_new(kubeconfig, err, err_len)) == NULL)
        return NULL;
    w->srv = srv;
    w->metrics = m;
    if (m)
        metrics_set_view(m, 0, 0, false, 0);
    if (watch_begin(w, err, err_len) < 0) {
        kubewatch_stop(w);
        return NULL;
    }
    log_info("cluster view: watching nodes and Kueue queues at %s (%s)",
             w->cfg.server, w->cfg.origin ? w->cfg.origin : "");
    return w;
}

void
kubewatch_stop(struct kubewatch *w)
{
    if (w == NULL)
        return;
    kube_watch_stop(w->watch);
    view_index_free(w->index);
    kube_config_free(&w->cfg);
    pthread_cond_destroy(&w->changed);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

struct view_index *
kubewatch_list_once(const char *kubeconfig)
{
    struct timespec until;
    char err[512] = "";
    struct kubewatch *w = watch_new(kubeconfig, err, sizeof(err));
    bool done = false;

    if (w == NULL) {
        fprintf(stderr, "topogate: %s\n", err);
        return NULL;
    }
    if (watch_begin(w, err, sizeof(err)) < 0) {
        fprintf(stderr, "topogate: %s\n", err);
        kubewatch_stop(w);
        return NULL;
    }
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&w->lock);
    while (!(done = all_synced(w)) &&
           pthread_cond_timedwait(&w->changed, &w->lock, &until) == 0)
        ;
    done = all_synced(w);
    pthread_mutex_unlock(&w->lock);
    /* Stopped first: the index is the watch thread's until then. */
    kube_watch_stop(w->watch);
    w->watch = NULL;
    if (!done) {
        fprintf(stderr,
                "topogate: the apiserver at %s did not list nodes "
                "within 30 s\n",
                w->cfg.server);
        kubewatch_stop(w);
        return NULL;
    }
    struct view_index *x = w->index; /* handed over */
    w->index = NULL;
    kubewatch_stop(w);
    return x;
}
