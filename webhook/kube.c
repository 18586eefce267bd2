/*
 * kube.c - LIST then WATCH a few resources, in one thread, over libcurl's
 * multi interface.
 *
 * Each resource runs a short state machine, the reflector's of client-go
 * (tools/cache/reflector.go):
 *
 *   DISCOVER (optional resources: GET /apis/GROUP, pick a version)
 *     -> LIST (limit=500 and continue; resourceVersion=0 at first, unset
 *        after a 410; any failure restarts the list whole)
 *     -> WATCH (from the list's resourceVersion, with bookmarks and a
 *        random timeoutSeconds in [300, 600])
 *
 * Every transition has a reason word (kube.h), goes to sink->restart and
 * is logged when it differs from the last one logged for that resource,
 * so an apiserver that is down for an hour gives one line, not hundreds.
 *
 * A failure backs off 0.8 s, doubling to 30 s, plus up to half again,
 * from the start once the last failure is 2 minutes old (client-go's
 * 800 ms, 30 s, 2 min). A 410 lists again at once; the end of a watch
 * at its timeoutSeconds watches again at once.
 *
 * Connections: curl keeps one only when its response was read whole (an
 * error status included: its body is read to the end); a watch, which
 * ends by a close or by our abort, never goes back to the pool
 * (FORBID_REUSE), and a transfer we abort is closed by curl.
 *
 * The thread sleeps in curl_multi_poll() until a socket, the next start
 * or the next tick; kube_watch_stop() wakes it with curl_multi_wakeup().
 */
#include "webhook/kube.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "policy/strbuf.h"
#include "webhook/file.h"
#include "webhook/kubeconfig.h"
#include "webhook/kubeframe.h"
#include "webhook/kubereq.h"
#include "webhook/log.h"

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
/* One page of 500 objects; gzip makes the wire smaller, not this. */
#define KUBE_PAGE_MAX (256u << 20)
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
    cJSON *items;        /* pages listed so far */
    CURL *easy;          /* the request in flight, or NULL */
    struct curl_slist *hdrs;
    char errbuf[CURL_ERROR_SIZE];
    struct strbuf body;       /* a list, discovery or error body */
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

static uint64_t
kube_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* xorshift64*: jitter and watch timeouts need spread, not secrecy. */
static uint64_t
kube_random(struct kube_watch *w)
{
    w->rnd ^= w->rnd >> 12;
    w->rnd ^= w->rnd << 25;
    w->rnd ^= w->rnd >> 27;
    return w->rnd * 2685821657736338717ull;
}

/* Appends to a response body, up to max bytes in all. */
static int
kube_body_add(struct kube_res *s, const char *p, size_t n, size_t max)
{
    if (s->body.len + n > max)
        return -1;
    strbuf_add(&s->body, p, n);
    return s->body.failed ? -1 : 0;
}

/* A response body as cJSON parses it: never NULL. */
static cJSON *
kube_body_parse(struct kube_res *s)
{
    return cJSON_ParseWithLength(s->body.buf ? s->body.buf : "", s->body.len);
}

static void
kube_set_str(char **dst, const char *src)
{
    free(*dst);
    *dst = src != NULL ? strdup(src) : NULL;
}

/* --- the token ------------------------------------------------------------ */

/* Re-reads the token file when a minute old or after a 401. */
static void
kube_token_refresh(struct kube_watch *w, uint64_t now)
{
    char *t;
    size_t len;

    if (w->cfg.token_file == NULL ||
        (w->token_read_ms != 0 &&
         now - w->token_read_ms < KUBE_TOKEN_REREAD_MS))
        return;
    w->token_read_ms = now;
    if ((t = file_read(w->cfg.token_file, KUBE_TOKEN_MAX, &len)) == NULL) {
        if (!w->token_warned)
            log_warn("kube: cannot read token file '%s'", w->cfg.token_file);
        w->token_warned = true;
        return;
    }
    while (len > 0 && (t[len - 1] == '\n' || t[len - 1] == '\r' ||
                       t[len - 1] == ' ' || t[len - 1] == '\t'))
        t[--len] = '\0';
    w->token_warned = false;
    if (w->token != NULL)
        file_free_secret(w->token, strlen(w->token));
    w->token = t;
}

/* --- transitions -------------------------------------------------------- */

static void kube_log_once(struct kube_res *s, const char *reason,
                          const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
kube_log_once(struct kube_res *s, const char *reason, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (s->logged != NULL && strcmp(s->logged, reason) == 0)
        return;
    s->logged = reason;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    log_warnx("kube: %s: %s", s->r->name, msg);
}

static void
kube_restart(struct kube_res *s, const char *reason)
{
    const struct kube_sink *k = &s->w->sink;

    if (k->restart != NULL)
        k->restart(k->ctx, s->r, reason);
}

static void
kube_state(struct kube_res *s, bool synced, const char *why)
{
    const struct kube_sink *k = &s->w->sink;

    if (s->synced == synced &&
        (synced || (s->state_why != NULL && strcmp(s->state_why, why) == 0)))
        return;
    s->synced = synced;
    s->state_why = synced ? NULL : why;
    if (k->state != NULL)
        k->state(k->ctx, s->r, synced, why);
}

static void
kube_list_reset(struct kube_res *s)
{
    cJSON_Delete(s->items);
    s->items = NULL;
    free(s->cont);
    s->cont = NULL;
    s->phase = KUBE_LIST;
}

/* Waits the back-off: 0.8 s doubling to 30 s, plus up to half again. */
static void
kube_backoff(struct kube_res *s, uint64_t now, const char *reason)
{
    struct kube_watch *w = s->w;
    uint64_t delay;

    if (s->failed_ms == 0 || now - s->failed_ms >= KUBE_BACKOFF_RESET_MS)
        s->backoff_ms = w->backoff_min_ms;
    delay = s->backoff_ms + kube_random(w) % (s->backoff_ms / 2 + 1);
    s->backoff_ms *= 2;
    if (s->backoff_ms > KUBE_BACKOFF_MAX_MS)
        s->backoff_ms = KUBE_BACKOFF_MAX_MS;
    s->failed_ms = now;
    s->next_ms = now + delay;
    kube_state(s, false, reason);
}

/* An optional resource that is not there: nothing, until we look again. */
static void
kube_absent(struct kube_res *s, uint64_t now, const char *reason)
{
    const struct kube_sink *k = &s->w->sink;
    const char *why =
        strcmp(reason, "forbidden") == 0 ? "forbidden" : "not served";

    kube_list_reset(s);
    free(s->rv);
    s->rv = NULL;
    s->phase = KUBE_DISCOVER;
    s->version = NULL;
    s->next_ms = now + s->w->rediscover_ms;
    if (!s->absent && k->replace != NULL) {
        cJSON *empty = cJSON_CreateArray();

        if (empty != NULL)
            k->replace(k->ctx, s->r, empty);
        cJSON_Delete(empty);
    }
    s->absent = true;
    kube_state(s, false, why);
}

/* Everything a failed transfer leads to, in one place. */
static void
kube_fail(struct kube_res *s, uint64_t now, const char *reason,
          enum kube_next next, const char *detail)
{
    kube_restart(s, reason);
    if (strcmp(reason, "watch_end") == 0)
        log_debug("kube: %s: watch ended after %u events, watching again",
                  s->r->name, s->events);
    else if (next == KUBE_ABSENT)
        kube_log_once(s, reason,
                      "%s (%s): empty, looking again "
                      "every %u s",
                      reason, detail, (unsigned)(s->w->rediscover_ms / 1000));
    else
        kube_log_once(s, reason, "%s (%s)%s", reason, detail,
                      next == KUBE_RELIST_NOW || next == KUBE_BACKOFF_LIST
                          ? ": listing again"
                          : "");
    switch (next) {
    case KUBE_RELIST_NOW:
        kube_list_reset(s);
        s->next_ms = now;
        break;
    case KUBE_REWATCH_NOW:
        s->next_ms = now;
        break;
    case KUBE_BACKOFF_LIST:
        kube_list_reset(s);
        kube_backoff(s, now, reason);
        break;
    case KUBE_BACKOFF:
        /* A list restarts whole; a watch resumes from rv. */
        if (s->phase == KUBE_LIST)
            kube_list_reset(s);
        kube_backoff(s, now, reason);
        break;
    case KUBE_ABSENT:
        kube_absent(s, now, reason);
        break;
    }
}

/* --- requests ----------------------------------------------------------- */

static size_t kube_write(char *p, size_t size, size_t n, void *arg);
static size_t kube_header(char *p, size_t size, size_t n, void *arg);

static char *
kube_url(struct kube_res *s)
{
    struct kube_watch *w = s->w;
    struct kubereq_target t = {w->cfg.server, s->r->group, s->version,
                               s->r->plural};
    unsigned timeout =
        KUBE_WATCH_MIN_S +
        (unsigned)(kube_random(w) % (KUBE_WATCH_MAX_S - KUBE_WATCH_MIN_S + 1));

    switch (s->phase) {
    case KUBE_DISCOVER:
        return kubereq_discovery_url(w->cfg.server, s->r->group);
    case KUBE_LIST:
        return kubereq_list_url(&t, KUBE_LIST_LIMIT, s->cont, s->rv_unset);
    case KUBE_WATCH:
        break;
    }
    return kubereq_watch_url(&t, s->rv, timeout);
}

/* Starts the request the phase calls for. -1 when out of memory. */
static int
kube_start(struct kube_res *s, uint64_t now)
{
    struct kube_watch *w = s->w;
    struct kubereq_opts o = {
        .ca_file = w->cfg.ca_file,
        .cert_file = w->cfg.cert_file,
        .key_file = w->cfg.key_file,
        .watch = s->phase == KUBE_WATCH,
        .stall_s = w->stall_s,
        .max_s = KUBE_WATCH_GUARD_S,
    };
    char *url = NULL;
    CURL *e = NULL;
    int rc = -1;

    kube_token_refresh(w, now);
    o.token = w->token != NULL ? w->token : w->cfg.token;
    if ((o.url = url = kube_url(s)) == NULL ||
        (e = kubereq_new(&o, &s->hdrs)) == NULL)
        goto out;
    curl_easy_setopt(e, CURLOPT_PRIVATE, s);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, s->errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, kube_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, s);
    if (o.watch) {
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, kube_header);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, s);
    }
    s->errbuf[0] = '\0';
    s->abort_reason = NULL;
    s->status_ok = false;
    s->events = 0;
    s->started_ms = now;
    kubeframe_reset(&s->frame);
    strbuf_free(&s->body);
    if (curl_multi_add_handle(w->multi, e) != CURLM_OK)
        goto out;
    s->easy = e;
    e = NULL;
    rc = 0;
out:
    if (rc != 0) {
        curl_slist_free_all(s->hdrs);
        s->hdrs = NULL;
    }
    curl_easy_cleanup(e);
    free(url);
    return rc;
}

/* --- the watch stream --------------------------------------------------- */

static void
kube_abort(struct kube_res *s, const char *reason, enum kube_next next,
           const char *detail)
{
    s->abort_reason = reason;
    s->abort_next = next;
    snprintf(s->abort_detail, sizeof(s->abort_detail), "%s", detail);
}

static const char *
kube_rv_of(const cJSON *obj)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");

    return cJSON_IsString(rv) && *rv->valuestring ? rv->valuestring : NULL;
}

/*
 * One whole event: {"type": ..., "object": ...}. 0 to go on, -1 when
 * the watch must end (the reason is in s->abort_*).
 */
static int
kube_event(struct kube_res *s, const char *p, size_t n)
{
    const struct kube_sink *k = &s->w->sink;
    cJSON *ev = cJSON_ParseWithLength(p, n);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
    const char *t, *rv;
    int rc = -1;

    if (!cJSON_IsString(type) || !cJSON_IsObject(obj)) {
        kube_abort(s, "bad_json", KUBE_BACKOFF_LIST,
                   "a watch event without type or object");
        goto out;
    }
    t = type->valuestring;
    s->events++;
    if (strcmp(t, "ERROR") == 0) {
        /* The object is a Status; 410 Expired (or Gone, from old
         * servers) means our resourceVersion left the history. */
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(obj, "reason");
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(obj, "message");
        char detail[160];
        bool gone =
            (cJSON_IsNumber(code) && code->valueint == 410) ||
            (cJSON_IsString(why) && (strcmp(why->valuestring, "Expired") == 0 ||
                                     strcmp(why->valuestring, "Gone") == 0));

        snprintf(detail, sizeof(detail), "ERROR event %d: %.100s",
                 cJSON_IsNumber(code) ? code->valueint : 0,
                 cJSON_IsString(msg) ? msg->valuestring : "");
        if (gone) {
            s->rv_unset = true;
            kube_abort(s, "expired", KUBE_RELIST_NOW, detail);
        } else {
            kube_abort(s, "error_event", KUBE_BACKOFF, detail);
        }
        goto out;
    }
    if ((rv = kube_rv_of(obj)) == NULL) {
        kube_abort(s, "bad_json", KUBE_BACKOFF_LIST,
                   "a watch event without metadata.resourceVersion");
        goto out;
    }
    if (strcmp(t, "ADDED") == 0 || strcmp(t, "MODIFIED") == 0 ||
        strcmp(t, "DELETED") == 0) {
        if (k->event != NULL)
            k->event(k->ctx, s->r, t, obj);
    } else if (strcmp(t, "BOOKMARK") != 0) {
        log_debug("kube: %s: ignoring a '%s' event", s->r->name, t);
    }
    kube_set_str(&s->rv, rv);
    rc = s->rv != NULL ? 0 : -1;
    if (rc != 0)
        kube_abort(s, "dropped", KUBE_BACKOFF, "out of memory");
out:
    cJSON_Delete(ev);
    return rc;
}

static int
kube_event_cb(void *ctx, const char *obj, size_t len)
{
    return kube_event(ctx, obj, len);
}

static int
kube_stream(struct kube_res *s, const char *p, size_t n)
{
    switch (kubeframe_feed(&s->frame, p, n, kube_event_cb, s)) {
    case KUBEFRAME_OK:
        return 0;
    case KUBEFRAME_TOO_LARGE:
        kube_abort(s, "too_large", KUBE_BACKOFF_LIST,
                   "a watch event over 8 MiB");
        return -1;
    case KUBEFRAME_NOT_JSON:
        kube_abort(s, "bad_json", KUBE_BACKOFF_LIST,
                   "a watch stream that is not JSON objects");
        return -1;
    case KUBEFRAME_STOPPED:
        break;
    }
    return -1; /* kube_event() said why */
}

static size_t
kube_write(char *p, size_t size, size_t n, void *arg)
{
    struct kube_res *s = arg;
    size_t len = size * n;
    long code = 0;

    curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
    s->status_ok = code == 200;
    if (s->phase == KUBE_WATCH && s->status_ok)
        return kube_stream(s, p, len) == 0 ? len : 0;
    if (kube_body_add(s, p, len,
                      s->status_ok ? KUBE_PAGE_MAX : KUBE_STATUS_MAX) != 0) {
        if (!s->status_ok)
            return len; /* an error's body: its start is enough */
        kube_abort(s, "too_large", KUBE_BACKOFF_LIST,
                   "a response body over its cap");
        return 0;
    }
    return len;
}

/*
 * The end of a watch's headers: a 200 means we are watching again, so
 * a resource that backed off from its watch is in sync once more.
 */
static size_t
kube_header(char *p, size_t size, size_t n, void *arg)
{
    struct kube_res *s = arg;
    size_t len = size * n;
    long code = 0;

    if (len > 2 || (len == 2 && memcmp(p, "\r\n", 2) != 0) ||
        (len == 1 && *p != '\n'))
        return len;
    curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
    if (code != 200)
        return len;
    if (s->logged != NULL)
        log_info("kube: %s: watching again from resourceVersion %s", s->r->name,
                 s->rv);
    s->logged = NULL;
    kube_state(s, true, NULL);
    return len;
}

/* --- whole responses ---------------------------------------------------- */

/* The Status message of an error body, for the log. */
static void
kube_status_message(struct kube_res *s, long code, char *out, size_t len)
{
    cJSON *st = kube_body_parse(s);
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(st, "message");

    snprintf(out, len, "HTTP %ld%s%.100s", code,
             cJSON_IsString(msg) ? ": " : "",
             cJSON_IsString(msg) ? msg->valuestring : "");
    cJSON_Delete(st);
}

/* GET /apis/GROUP: the APIGroup's versions; ours, in our order. */
static void
kube_discovered(struct kube_res *s, uint64_t now)
{
    cJSON *g = kube_body_parse(s);
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(g, "versions");
    const cJSON *v;

    if (!cJSON_IsArray(vs)) {
        kube_fail(s, now, "bad_json", KUBE_BACKOFF, "not an APIGroup");
        goto out;
    }
    s->version = NULL;
    for (const char *const *want = s->r->versions; *want && !s->version;
         want++) {
        cJSON_ArrayForEach(v, vs)
        {
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(v, "version");

            if (cJSON_IsString(name) && strcmp(name->valuestring, *want) == 0)
                s->version = *want;
        }
    }
    if (s->version == NULL) {
        kube_fail(s, now, "not_served", KUBE_ABSENT,
                  "none of our versions is served");
        goto out;
    }
    log_info("kube: %s: served as %s/%s", s->r->name, s->r->group, s->version);
    s->phase = KUBE_LIST;
    s->next_ms = now;
out:
    cJSON_Delete(g);
}

/* One page of a list; the last one hands the whole list over. */
static void
kube_listed(struct kube_res *s, uint64_t now)
{
    const struct kube_sink *k = &s->w->sink;
    cJSON *l = kube_body_parse(s);
    cJSON *items = cJSON_DetachItemFromObjectCaseSensitive(l, "items");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(l, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
    const cJSON *cont = cJSON_GetObjectItemCaseSensitive(md, "continue");

    strbuf_free(&s->body);
    if (cJSON_IsNull(items)) {
        /* Go encodes an empty slice of some lists as null. */
        cJSON_Delete(items);
        items = cJSON_CreateArray();
    }
    if (!cJSON_IsArray(items) || !cJSON_IsString(rv) ||
        *rv->valuestring == '\0') {
        kube_fail(s, now, "bad_json", KUBE_BACKOFF,
                  "a list without items or metadata.resourceVersion");
        goto out;
    }
    if (s->items == NULL) {
        s->items = items;
        items = NULL;
    } else {
        cJSON *it;

        while (items->child != NULL) {
            it = cJSON_DetachItemViaPointer(items, items->child);
            cJSON_AddItemToArray(s->items, it);
        }
    }
    if (cJSON_IsString(cont) && *cont->valuestring != '\0') {
        kube_set_str(&s->cont, cont->valuestring);
        s->next_ms = now;
        goto out;
    }
    /* All pages share the first page's resourceVersion: a snapshot. */
    kube_set_str(&s->rv, rv->valuestring);
    if (k->replace != NULL)
        k->replace(k->ctx, s->r, s->items);
    if (s->logged != NULL || !s->synced)
        log_info("kube: %s: listed %d at resourceVersion %s, watching",
                 s->r->name, cJSON_GetArraySize(s->items), s->rv);
    s->logged = NULL;
    s->absent = false;
    s->rv_unset = false;
    kube_list_reset(s);
    s->phase = KUBE_WATCH;
    s->next_ms = now;
    kube_state(s, true, NULL);
out:
    cJSON_Delete(items);
    cJSON_Delete(l);
}

/*
 * What an HTTP status other than 200 leads to. retry_after: the
 * Retry-After of a 429 or 5xx in seconds, or 0.
 */
static void
kube_http_error(struct kube_res *s, uint64_t now, long code,
                uint64_t retry_after)
{
    bool optional = s->r->optional;
    char detail[160];

    kube_status_message(s, code, detail, sizeof(detail));
    if (code == 401) {
        /* The token may have rotated under us: read it again now. */
        s->w->token_read_ms = 0;
        kube_fail(s, now, "unauthorized", KUBE_BACKOFF, detail);
    } else if (code == 403) {
        kube_fail(s, now, "forbidden", optional ? KUBE_ABSENT : KUBE_BACKOFF,
                  detail);
    } else if (code == 404) {
        kube_fail(s, now, "not_served", optional ? KUBE_ABSENT : KUBE_BACKOFF,
                  detail);
    } else if (code == 410 && s->phase != KUBE_DISCOVER) {
        /* A list at "" cannot be too old: a 410 there is a server bug,
         * not a reason to spin. */
        bool again = s->phase == KUBE_LIST && s->cont == NULL && s->rv_unset;

        s->rv_unset = true;
        kube_fail(s, now, "expired",
                  again ? KUBE_BACKOFF_LIST : KUBE_RELIST_NOW, detail);
    } else if (code == 429 || code >= 500) {
        kube_fail(s, now, code == 429 ? "http_429" : "http_5xx", KUBE_BACKOFF,
                  detail);
        /* The server's word on when, within our longest back-off. */
        if (retry_after > KUBE_BACKOFF_MAX_MS / 1000)
            retry_after = KUBE_BACKOFF_MAX_MS / 1000;
        if (now + retry_after * 1000 > s->next_ms)
            s->next_ms = now + retry_after * 1000;
    } else if (code >= 400) {
        kube_fail(s, now, "http_4xx", KUBE_BACKOFF, detail);
    } else {
        kube_fail(s, now, "http_other", KUBE_BACKOFF, detail);
    }
}

static const char *
kube_curl_reason(struct kube_res *s, CURLcode rc)
{
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
        return s->phase == KUBE_WATCH && s->status_ok ? "stalled" : "timeout";
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ENGINE_INITFAILED:
        return "tls";
    default:
        return "dropped";
    }
}

static void
kube_done(struct kube_res *s, CURLcode rc, uint64_t now)
{
    struct kube_watch *w = s->w;
    curl_off_t retry_after = 0;
    long code = 0;
    char detail[CURL_ERROR_SIZE + 32];

    curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(s->easy, CURLINFO_RETRY_AFTER, &retry_after);
    curl_multi_remove_handle(w->multi, s->easy);
    curl_easy_cleanup(s->easy);
    s->easy = NULL;
    curl_slist_free_all(s->hdrs);
    s->hdrs = NULL;
    if (s->abort_reason != NULL) {
        kube_fail(s, now, s->abort_reason, s->abort_next, s->abort_detail);
    } else if (rc == CURLE_OPERATION_TIMEDOUT && s->phase == KUBE_WATCH &&
               now - s->started_ms >= 1000 * (uint64_t)KUBE_WATCH_GUARD_S) {
        /* A server that ignored our timeoutSeconds: an end all the same. */
        kube_fail(s, now, "watch_end", KUBE_REWATCH_NOW, "our guard");
    } else if (rc != CURLE_OK) {
        snprintf(detail, sizeof(detail), "%s",
                 s->errbuf[0] ? s->errbuf : curl_easy_strerror(rc));
        kube_fail(s, now, kube_curl_reason(s, rc), KUBE_BACKOFF, detail);
    } else if (code != 200) {
        kube_http_error(s, now, code,
                        retry_after > 0 ? (uint64_t)retry_after : 0);
    } else if (s->phase == KUBE_DISCOVER) {
        kube_discovered(s, now);
    } else if (s->phase == KUBE_LIST) {
        kube_listed(s, now);
    } else if (kubeframe_partial(&s->frame)) {
        kube_fail(s, now, "dropped", KUBE_BACKOFF, "a watch ended mid-event");
    } else if (s->events == 0 && now - s->started_ms < 1000) {
        /* A server that ends every watch at once would have us spin. */
        kube_fail(s, now, "watch_end", KUBE_BACKOFF, "an empty watch");
    } else {
        kube_fail(s, now, "watch_end", KUBE_REWATCH_NOW, "timeoutSeconds");
    }
    strbuf_free(&s->body);
    kubeframe_reset(&s->frame);
}

/* --- the thread --------------------------------------------------------- */

static void *
kube_thread(void *arg)
{
    struct kube_watch *w = arg;
    const struct kube_sink *k = &w->sink;
    uint64_t next_tick = kube_now_ms();

    while (!atomic_load(&w->stop)) {
        uint64_t now = kube_now_ms(), wait = KUBE_TICK_MS;
        int running, left;
        CURLMsg *m;

        for (size_t i = 0; i < w->n; i++) {
            struct kube_res *s = &w->res[i];

            if (s->easy == NULL && now >= s->next_ms && kube_start(s, now) != 0)
                kube_fail(s, now, "dropped", KUBE_BACKOFF, "out of memory");
        }
        curl_multi_perform(w->multi, &running);
        while ((m = curl_multi_info_read(w->multi, &left)) != NULL) {
            CURLcode rc = m->data.result;
            char *s = NULL;

            if (m->msg != CURLMSG_DONE)
                continue;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &s);
            kube_done((struct kube_res *)s, rc, kube_now_ms());
        }
        now = kube_now_ms();
        if (now >= next_tick) {
            if (k->tick != NULL)
                k->tick(k->ctx);
            next_tick = now + KUBE_TICK_MS;
        }
        wait = next_tick > now ? next_tick - now : 0;
        for (size_t i = 0; i < w->n; i++) {
            struct kube_res *s = &w->res[i];

            if (s->easy == NULL)
                wait = s->next_ms <= now         ? 0
                       : s->next_ms - now < wait ? s->next_ms - now
                                                 : wait;
        }
        if (wait > 0)
            curl_multi_poll(w->multi, NULL, 0, (int)wait, NULL);
    }
    return NULL;
}

/* --- start and stop ----------------------------------------------------- */

static int
kube_copy_config(struct kube_watch *w, const struct kube_config *c, char *err,
                 size_t err_len)
{
    struct kube_config *d = &w->cfg;
    const char *src[] = {c->server,     c->ca_file, c->cert_file, c->key_file,
                         c->token_file, c->token,   c->origin};
    char **dst[] = {&d->server,     &d->ca_file, &d->cert_file, &d->key_file,
                    &d->token_file, &d->token,   &d->origin};
    int rc;

    for (size_t i = 0; i < sizeof(src) / sizeof(*src); i++)
        if (src[i] != NULL && (*dst[i] = strdup(src[i])) == NULL) {
            snprintf(err, err_len, "out of memory");
            return -1;
        }
    if (d->server == NULL) {
        snprintf(err, err_len, "no apiserver address");
        return -1;
    }
    /* libcurl's GnuTLS backend takes no PEM from memory. */
    d->ca_pem = c->ca_pem;
    d->cert_pem = c->cert_pem;
    d->key_pem = c->key_pem;
    rc = kubeconfig_pem_files(d, &w->tmpdir, err, err_len);
    d->ca_pem = d->cert_pem = d->key_pem = NULL;
    return rc;
}

static void
kube_free(struct kube_watch *w)
{
    if (w == NULL)
        return;
    for (size_t i = 0; w->res != NULL && i < w->n; i++) {
        struct kube_res *s = &w->res[i];

        if (s->easy != NULL) {
            curl_multi_remove_handle(w->multi, s->easy);
            curl_easy_cleanup(s->easy);
        }
        curl_slist_free_all(s->hdrs);
        cJSON_Delete(s->items);
        free(s->rv);
        free(s->cont);
        strbuf_free(&s->body);
        kubeframe_free(&s->frame);
    }
    free(w->res);
    if (w->multi != NULL)
        curl_multi_cleanup(w->multi);
    kubeconfig_pem_remove(w->tmpdir);
    free(w->tmpdir);
    if (w->token != NULL)
        file_free_secret(w->token, strlen(w->token));
    kube_config_free(&w->cfg);
    free(w);
    curl_global_cleanup();
}

struct kube_watch *
kube_watch_start(const struct kube_config *cfg,
                 const struct kube_resource *resources, size_t n,
                 const struct kube_sink *sink, char *err, size_t err_len)
{
    struct kube_watch *w;
    uint64_t now = kube_now_ms();

    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, err_len, "cannot start libcurl");
        return NULL;
    }
    if ((w = calloc(1, sizeof(*w))) == NULL) {
        curl_global_cleanup();
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    w->sink = *sink;
    w->n = n;
    atomic_init(&w->stop, false);
    w->backoff_min_ms =
        cfg->test_backoff_ms ? cfg->test_backoff_ms : KUBE_BACKOFF_MS;
    w->stall_s = cfg->test_stall_s ? (long)cfg->test_stall_s : KUBE_STALL_S;
    w->rediscover_ms =
        1000ull *
        (cfg->test_rediscover_s ? cfg->test_rediscover_s : KUBE_REDISCOVER_S);
    if (getrandom(&w->rnd, sizeof(w->rnd), 0) != sizeof(w->rnd))
        w->rnd = now ^ ((uint64_t)getpid() << 32);
    w->rnd |= 1;
    if (kube_copy_config(w, cfg, err, err_len) != 0)
        goto fail;
    if ((w->res = calloc(n ? n : 1, sizeof(*w->res))) == NULL ||
        (w->multi = curl_multi_init()) == NULL) {
        snprintf(err, err_len, "cannot start libcurl: out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        struct kube_res *s = &w->res[i];

        s->w = w;
        s->r = &resources[i];
        s->backoff_ms = w->backoff_min_ms;
        s->next_ms = now;
        kubeframe_init(&s->frame, KUBE_EVENT_MAX);
        if (s->r->optional) {
            s->phase = KUBE_DISCOVER;
        } else {
            s->phase = KUBE_LIST;
            s->version = s->r->versions[0];
        }
    }
    if ((errno = pthread_create(&w->thread, NULL, kube_thread, w)) != 0) {
        snprintf(err, err_len, "cannot start the watch thread: %s",
                 strerror(errno));
        goto fail;
    }
    log_info("kube: watching %zu resources at %s (%s)", n, w->cfg.server,
             w->cfg.origin ? w->cfg.origin : "?");
    return w;
fail:
    kube_free(w);
    return NULL;
}

void
kube_watch_stop(struct kube_watch *w)
{
    if (w == NULL)
        return;
    atomic_store(&w->stop, true);
    curl_multi_wakeup(w->multi);
    pthread_join(w->thread, NULL);
    kube_free(w);
}
