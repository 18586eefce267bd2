/*
 * kube_internal.h - what kube.c (the thread, its requests, start and stop)
 * and kubeanswer.c (what the apiserver answers, and the transitions it
 * leads to) share: the limits, each resource's state machine, the watch.
 */
#ifndef TOPOGATE_KUBE_INTERNAL_H
#define TOPOGATE_KUBE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "base/strbuf.h"
#include "kube/kube.h"
#include "kube/kubeconfig.h"
#include "kube/kubeframe.h"
#include "kube/kubelist.h"

/*
 * The apiserver sends a bookmark about once a minute on a quiet watch;
 * 90 s without a byte means a bookmark is at least 30 s late, or the
 * path to the server is gone without a reset.
 */
#define KUBE_STALL_S 90
#define KUBE_WATCH_MIN_S 300
#define KUBE_WATCH_MAX_S 600
/* The server ends a watch at timeoutSeconds; this is for one that does
 * not, and streams bookmarks past it. */
#define KUBE_WATCH_GUARD_S (KUBE_WATCH_MAX_S + 60)
#define KUBE_LIST_LIMIT 500
/* One event: a Node is tens of KiB, a huge CRD object a few MiB. */
#define KUBE_EVENT_MAX (8u << 20)
/* One list item: more than an event, so that an event too large for us
 * lists again, where the object comes through. etcd refuses a request
 * over 1.5 MiB by default (--max-request-bytes), so no real object comes
 * near either. */
#define KUBE_ITEM_MAX (16u << 20)
/* A list's envelope (kind, apiVersion, metadata), items left out. */
#define KUBE_LIST_REST_MAX (1u << 20)
/*
 * A list that never ends (a continue token on every page) is cut here
 * and started over after a back-off. 1,000 pages of 500 are 500,000
 * objects; the largest clusters Kubernetes supports have 5,000 nodes
 * (kubernetes.io/docs/setup/best-practices/cluster-large/) and the
 * largest managed ones tens of thousands.
 */
#define KUBE_LIST_PAGES_MAX 1000
#define KUBE_LIST_ITEMS_MAX 500000
/* A Status body of a failed watch: we log its message, nothing more. */
#define KUBE_STATUS_MAX (64u << 10)
#define KUBE_BACKOFF_MS 800
#define KUBE_BACKOFF_MAX_MS 30000
#define KUBE_BACKOFF_RESET_MS 120000
#define KUBE_REDISCOVER_S 300
/* client-go's cached token source re-reads the file every minute. */
#define KUBE_TOKEN_REREAD_MS 60000
#define KUBE_TOKEN_MAX 65536
#define KUBE_TICK_MS 1000

enum kube_phase { KUBE_DISCOVER, KUBE_LIST, KUBE_WATCH };

/* What to do after a transfer failed. */
enum kube_next {
    KUBE_RELIST_NOW,   /* list again at once */
    KUBE_REWATCH_NOW,  /* watch again from rv at once */
    KUBE_BACKOFF,      /* wait, then resume where we were */
    KUBE_BACKOFF_LIST, /* wait, then list again */
    KUBE_RELIST_LATER, /* wait, still in sync, then list again (a 410) */
    KUBE_ABSENT,       /* optional and not served: empty, look later */
};

struct kube_res {
    struct kube_watch *w;
    const struct kube_resource *r;
    enum kube_phase phase;
    const char *version; /* chosen: one of r->versions */
    char *rv;            /* last resourceVersion seen, or NULL */
    char *cont;          /* continue token of the list in progress */
    bool rv_unset;       /* next list at resourceVersion "" (after 410) */
    bool rv_last;        /* next list at rv, unpaged (a watch's 410) */
    size_t list_items;   /* handed to the sink in this list so far */
    unsigned list_pages; /* pages read in this list so far */
    CURL *easy;          /* the request in flight, or NULL */
    struct curl_slist *hdrs;
    char errbuf[CURL_ERROR_SIZE];
    struct strbuf body;       /* a discovery or error body */
    struct kubelist list;     /* a list page, item by item */
    struct kubeframe frame;   /* a watch's events */
    const char *abort_reason; /* set where we abort a transfer */
    enum kube_next abort_next;
    char abort_detail[160];
    bool status_ok;      /* the response is a 200 */
    unsigned events;     /* in this watch */
    uint64_t started_ms; /* of the request in flight */
    uint64_t next_ms;    /* when to start the next request */
    uint64_t backoff_ms; /* the next back-off, before jitter */
    uint64_t failed_ms;  /* of the last back-off, 0: never */
    bool synced;
    const char *state_why; /* last state(false) reason, or NULL */
    bool absent;           /* said "empty" for a resource not served */
    const char *logged;    /* last reason logged */
};

struct kube_watch {
    struct kube_config cfg;
    char *tmpdir; /* in-memory PEMs written out for GnuTLS, or NULL */
    char *token;
    uint64_t token_read_ms; /* 0: read before the next request */
    bool token_warned;
    CURLM *multi;
    pthread_t thread;
    atomic_bool stop;
    struct kube_sink sink; /* a copy: callers build it on the stack */
    struct kube_res *res;
    size_t n;
    uint64_t rnd;
    uint64_t backoff_min_ms;
    long stall_s;
    uint64_t rediscover_ms;
};

/* kube.c */
uint64_t kube_random(struct kube_watch *w);
int kube_body_add(struct kube_res *s, const char *p, size_t n, size_t max);
cJSON *kube_body_parse(struct kube_res *s);
void kube_set_str(char **dst, const char *src);

/* kubeanswer.c: curl's callbacks for a transfer's bytes and headers; a
 * failed transfer; a finished one (its status, its body). */
size_t kube_write(char *p, size_t size, size_t n, void *arg);
size_t kube_header(char *p, size_t size, size_t n, void *arg);
void kube_fail(struct kube_res *s, uint64_t now, const char *reason,
               enum kube_next next, const char *detail);
void kube_done(struct kube_res *s, CURLcode rc, uint64_t now);

#endif
