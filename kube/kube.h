/*
 * kube.h - a small apiserver client: LIST, then WATCH, a few resources in
 * one thread of its own, handing whole parsed objects to a sink.
 *
 * The client owns its thread, its connections and every cJSON it parses;
 * a sink borrows each object only for the duration of the callback. Every
 * sink callback runs on the watch thread, one at a time, so the sink
 * needs no lock for its own state; a callback must not block for long
 * (it holds up every resource) nor call kube_watch_stop().
 */
#ifndef TOPOGATE_KUBE_H
#define TOPOGATE_KUBE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* Where the apiserver is and who we are. Every string is owned. */
struct kube_config {
    char *server;     /* "https://10.96.0.1:443" */
    char *ca_file;    /* PEM bundle to trust, or NULL */
    char *ca_pem;     /* the same, in memory (kubeconfig *-data), or NULL */
    char *cert_file;  /* client certificate, or NULL */
    char *cert_pem;   /* in memory, or NULL */
    char *key_file;   /* its key, or NULL */
    char *key_pem;    /* in memory, or NULL */
    char *token_file; /* bearer token, re-read as it rotates, or NULL */
    char *token;      /* a fixed bearer token, or NULL */
    char *origin;     /* "in-cluster" or the kubeconfig's path: for logs */
    /*
     * Tests only, so a scenario runs in seconds: 0 keeps the production
     * value. Nothing outside test/ sets these.
     */
    unsigned test_backoff_ms;   /* the first back-off delay (800 ms) */
    unsigned test_stall_s;      /* a watch silent this long is dropped (90) */
    unsigned test_rediscover_s; /* look again for a CRD not served (300) */
};

/*
 * In cluster: KUBERNETES_SERVICE_HOST/PORT, the mounted CA and token
 * (from $TOPOGATE_SA_DIR instead of the service-account mount when set:
 * for tests). 0, or -1 with a one-line reason in err ("not in a
 * cluster: ...", or "cannot read '.../token': ..." when no token is
 * mounted). The token is read again by the watch as it rotates.
 */
int kube_config_in_cluster(struct kube_config *c, char *err, size_t err_len);

/*
 * Out of cluster: a kubeconfig file's current context: server, CA (file
 * or -data), client certificate and key (file or -data), token or
 * tokenFile; relative paths are relative to the file. Exec plugins, auth
 * providers, basic auth and insecure-skip-tls-verify are refused by name.
 * 0, or -1 + err ("FILE:LINE:COL: message").
 */
int kube_config_load(const char *path, struct kube_config *c, char *err,
                     size_t err_len);

void kube_config_free(struct kube_config *c);

/* One resource to list and watch. Strings are static. */
struct kube_resource {
    const char *name;  /* "nodes", "resourceflavors": logs and metrics */
    const char *group; /* "" for the core API, "kueue.x-k8s.io" */
    const char *const *versions; /* preferred first, NULL-terminated */
    const char *plural;          /* the path segment: "nodes" */
    bool optional; /* a CRD that may not be served: look again later */
    /* labelSelector of every list and watch ("key" selects the objects
     * that carry the label), or NULL: all of them. */
    const char *selector;
};

/*
 * What the watch thread hands over. Each callback may be NULL.
 * item: one object of a list, as it is read: a list is never held
 *   whole, here or in a page (a list at resourceVersion=0 is one page of
 *   the whole cluster).
 * listed: whole true: the items since the last listed() are a complete
 *   list (all pages, one resourceVersion) and replace everything known
 *   of that resource. Also called, with no items before it, when an
 *   optional resource turns out not to be served. whole false: the list
 *   failed part way and starts over: forget its items.
 * event: one watch event, type "ADDED", "MODIFIED" or "DELETED".
 * restart: the loop went back to listing, watching or backed off; reason
 *   is one word of a fixed set, for a metric label:
 *     watch_end     the server ended a watch (its timeoutSeconds): watch
 *                   again from the last resourceVersion at once
 *     expired       410 Gone, as a status or an ERROR event: back off
 *                   (as client-go's reflector does), list again
 *     error_event   another ERROR event in a watch: back off, watch again
 *     too_large     one event or list item past its cap, or a list past
 *                   its cap of pages or items (kube_internal.h): back
 *                   off, list
 *     bad_json      a body or event that is not what the API says: ditto
 *     dropped       the connection failed or broke: back off, retry
 *     timeout       connect or request timeout: back off, retry
 *     stalled       a watch silent past the low-speed window: ditto
 *     tls           certificate or TLS setup failed: ditto
 *     unauthorized  401: read the token file again, back off, retry
 *     forbidden     403 (RBAC missing): optional resources look again
 *                   every 5 minutes, others back off
 *     not_served    404: an optional resource's group or version is not
 *                   served: empty replace, look again every 5 minutes
 *     http_429, http_5xx, http_4xx, http_other: that status: back off
 * state: synced true once a list completed; false, with why (the reason
 *   word, or "not served"), when the loop backs off or gives up on an
 *   optional resource. Called on a change of either, not repeated.
 * tick: about once a second, whatever happens: a place to publish.
 */
struct kube_sink {
    void *ctx;
    void (*item)(void *ctx, const struct kube_resource *r,
                 const cJSON *object);
    void (*listed)(void *ctx, const struct kube_resource *r, bool whole);
    void (*event)(void *ctx, const struct kube_resource *r, const char *type,
                  const cJSON *object);
    void (*restart)(void *ctx, const struct kube_resource *r,
                    const char *reason);
    void (*state)(void *ctx, const struct kube_resource *r, bool synced,
                  const char *why);
    void (*tick)(void *ctx);
};

struct kube_watch;

/*
 * Starts the watch thread over the n resources. Copies cfg and sink;
 * borrows resources (and sink->ctx), which must outlive the watch. NULL
 * + err when the thread or the HTTP library cannot start (never for an
 * apiserver that is down: that is retried with back-off).
 */
struct kube_watch *kube_watch_start(const struct kube_config *cfg,
                                    const struct kube_resource *resources,
                                    size_t n, const struct kube_sink *sink,
                                    char *err, size_t err_len);

/* Wakes the thread, stops it within a second, frees w. NULL: no-op. */
void kube_watch_stop(struct kube_watch *w);

#endif
