/*
 * kubeanswer.c - what the apiserver answers a resource's request, and
 * where it leads (kube.c says how the machine runs): a watch's stream of
 * events, a whole response (discovery, a page of a list, an error's
 * Status), and the transitions they cause: restart, back-off, relist,
 * "not served", each with its reason word.
 */
#include "kube/kube_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kubereq.h"
#include "lib/log.h"

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

/* Forgets a list in progress; the sink forgets the items it was given. */
static void
kube_list_reset(struct kube_res *s)
{
    const struct kube_sink *k = &s->w->sink;

    if (s->list_items > 0 && k->listed != NULL)
        k->listed(k->ctx, s->r, false);
    s->list_items = 0;
    s->list_pages = 0;
    kubelist_reset(&s->list);
    free(s->cont);
    s->cont = NULL;
    s->phase = KUBE_LIST;
}

/*
 * Waits the back-off of client-go's reflector: 0.8 s doubling to 30 s,
 * plus up to as much again (jitter 1.0), back to 0.8 s once the last
 * back-off is 2 minutes old. kubernetes/client-go tools/cache/
 * reflector.go, NewReflectorWithOptions():
 * NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0); apimachinery
 * pkg/util/wait/backoff.go, Jitter(): d + rand * 1.0 * d. unsync: the
 * resource's data is not to be trusted meanwhile (not after a 410: the
 * list in hand is complete, only a little old).
 */
static void
kube_backoff(struct kube_res *s, uint64_t now, const char *reason,
             bool unsync)
{
    struct kube_watch *w = s->w;
    uint64_t delay;

    if (s->failed_ms == 0 || now - s->failed_ms >= KUBE_BACKOFF_RESET_MS)
        s->backoff_ms = w->backoff_min_ms;
    delay = s->backoff_ms + kube_random(w) % (s->backoff_ms + 1);
    s->backoff_ms *= 2;
    if (s->backoff_ms > KUBE_BACKOFF_MAX_MS)
        s->backoff_ms = KUBE_BACKOFF_MAX_MS;
    s->failed_ms = now;
    s->next_ms = now + delay;
    if (unsync)
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
    if (!s->absent && k->listed != NULL)
        k->listed(k->ctx, s->r, true); /* an empty list */
    s->absent = true;
    kube_state(s, false, why);
}

/* Everything a failed transfer leads to, in one place. */
void
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
                      next == KUBE_RELIST_NOW || next == KUBE_BACKOFF_LIST ||
                              next == KUBE_RELIST_LATER
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
        kube_backoff(s, now, reason, true);
        break;
    case KUBE_RELIST_LATER:
        kube_list_reset(s);
        kube_backoff(s, now, reason, false);
        break;
    case KUBE_BACKOFF:
        /* A list restarts whole; a watch resumes from rv. */
        if (s->phase == KUBE_LIST)
            kube_list_reset(s);
        kube_backoff(s, now, reason, true);
        break;
    case KUBE_ABSENT:
        kube_absent(s, now, reason);
        break;
    }
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
            /* client-go lists at the last resourceVersion then, from
             * the watch cache: data at least that new (watch()). */
            s->rv_last = s->rv != NULL;
            kube_abort(s, "expired", KUBE_RELIST_LATER, detail);
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

/* One item of a list page, handed over as it is read. */
static int
kube_item(void *ctx, const char *p, size_t n)
{
    struct kube_res *s = ctx;
    const struct kube_sink *k = &s->w->sink;
    cJSON *obj;

    if (s->list_items >= KUBE_LIST_ITEMS_MAX) {
        kube_abort(s, "too_large", KUBE_BACKOFF_LIST,
                   "a list of more than 500000 items");
        return -1;
    }
    if ((obj = cJSON_ParseWithLength(p, n)) == NULL) {
        kube_abort(s, "bad_json", KUBE_BACKOFF_LIST,
                   "a list item that is not JSON");
        return -1;
    }
    s->list_items++;
    if (k->item != NULL)
        k->item(k->ctx, s->r, obj);
    cJSON_Delete(obj);
    return 0;
}

static int
kube_list_stream(struct kube_res *s, const char *p, size_t n)
{
    switch (kubelist_feed(&s->list, p, n, kube_item, s)) {
    case KUBELIST_OK:
        return 0;
    case KUBELIST_TOO_LARGE:
        kube_abort(s, "too_large", KUBE_BACKOFF_LIST,
                   "a list item over 16 MiB, or a list envelope over 1 MiB");
        return -1;
    case KUBELIST_NOT_JSON:
        kube_abort(s, "bad_json", KUBE_BACKOFF_LIST,
                   "a list that is not an object of items");
        return -1;
    case KUBELIST_STOPPED:
        break;
    }
    return -1; /* kube_item() said why */
}

size_t
kube_write(char *p, size_t size, size_t n, void *arg)
{
    struct kube_res *s = arg;
    size_t len = size * n;
    long code = 0;

    curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &code);
    s->status_ok = code == 200;
    if (s->phase == KUBE_WATCH && s->status_ok)
        return kube_stream(s, p, len) == 0 ? len : 0;
    if (s->phase == KUBE_LIST && s->status_ok)
        return kube_list_stream(s, p, len) == 0 ? len : 0;
    /* Discovery (an APIGroup of a few hundred bytes) is capped as an
     * envelope is. */
    if (kube_body_add(s, p, len,
                      s->status_ok ? KUBE_LIST_REST_MAX : KUBE_STATUS_MAX) !=
        0) {
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
size_t
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

/* The end of one page of a list; the last one completes it. */
static void
kube_listed(struct kube_res *s, uint64_t now)
{
    const struct kube_sink *k = &s->w->sink;
    size_t len;
    const char *text = kubelist_rest(&s->list, &len);
    cJSON *l = kubelist_done(&s->list) ? cJSON_ParseWithLength(text, len)
                                       : NULL;
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(l, "items");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(l, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
    const cJSON *cont = cJSON_GetObjectItemCaseSensitive(md, "continue");
    size_t n;

    kubelist_reset(&s->list);
    /* Go encodes an empty slice of some lists as null. */
    if (!(cJSON_IsArray(items) || cJSON_IsNull(items)) || !cJSON_IsString(rv) ||
        *rv->valuestring == '\0') {
        kube_fail(s, now, "bad_json", KUBE_BACKOFF,
                  "a list without items or metadata.resourceVersion");
        goto out;
    }
    if (cJSON_IsString(cont) && *cont->valuestring != '\0') {
        if (++s->list_pages >= KUBE_LIST_PAGES_MAX) {
            kube_fail(s, now, "too_large", KUBE_BACKOFF_LIST,
                      "a list of more than 1000 pages");
            goto out;
        }
        kube_set_str(&s->cont, cont->valuestring);
        s->next_ms = now;
        goto out;
    }
    /* All pages share the first page's resourceVersion: a snapshot. */
    kube_set_str(&s->rv, rv->valuestring);
    n = s->list_items;
    s->list_items = 0; /* complete: nothing to forget */
    if (k->listed != NULL)
        k->listed(k->ctx, s->r, true);
    if (s->logged != NULL || !s->synced)
        log_info("kube: %s: listed %zu at resourceVersion %s, watching",
                 s->r->name, n, s->rv);
    s->logged = NULL;
    s->absent = false;
    s->rv_unset = false;
    s->rv_last = false;
    kube_list_reset(s);
    s->phase = KUBE_WATCH;
    s->next_ms = now;
    kube_state(s, true, NULL);
out:
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

        if (s->phase == KUBE_WATCH) {
            s->rv_last = s->rv != NULL; /* as for an ERROR event */
            s->rv_unset = s->rv == NULL;
        } else {
            s->rv_last = false;
            s->rv_unset = true;
        }
        /* client-go lists again at once after a 410 on a list (its
         * pager, and list()), and after the reflector's back-off after
         * one on a watch (watch() returns, Run()'s BackoffUntil waits). */
        kube_fail(s, now, "expired",
                  again                     ? KUBE_BACKOFF_LIST
                  : s->phase == KUBE_WATCH ? KUBE_RELIST_LATER
                                            : KUBE_RELIST_NOW,
                  detail);
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

void
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
    kubelist_reset(&s->list);
    kubeframe_reset(&s->frame);
}

