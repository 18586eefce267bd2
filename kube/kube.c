/*
 * kube.c - LIST then WATCH a few resources, in one thread, over libcurl's
 * multi interface: the thread, its requests, start and stop. What the
 * apiserver answers, and the transitions that follow, are kubeanswer.c.
 *
 * Each resource runs a short state machine, the reflector's of client-go
 * (tools/cache/reflector.go):
 *
 *   DISCOVER (optional resources: GET /apis/GROUP, pick a version)
 *     -> LIST (limit=500 and continue; resourceVersion=0 at first, unset
 *        after a 410 on a list, the last one seen and unpaged after a
 *        410 on a watch; any failure restarts the list whole; each item
 *        goes to the sink as it is read, kubelist.c, and a list past
 *        1,000 pages or 500,000 items is cut and started over)
 *     -> WATCH (from the list's resourceVersion, with bookmarks and a
 *        random timeoutSeconds in [300, 600])
 *
 * Every transition has a reason word (kube.h), goes to sink->restart and
 * is logged when it differs from the last one logged for that resource,
 * so an apiserver that is down for an hour gives one line, not hundreds.
 *
 * A failure backs off 0.8 s, doubling to 30 s, plus up to as much again,
 * from the start once the last failure is 2 minutes old (client-go's
 * reflector: 800 ms, 30 s, 2 min, jitter 1.0; kubeanswer.c). A 410 on
 * a list lists again at once; a 410 on a watch lists again after that
 * back-off, so an apiserver that expires every watch is asked less and
 * less often; the end of a watch at its timeoutSeconds watches again at
 * once.
 *
 * Connections: curl keeps one only when its response was read whole (an
 * error status included: its body is read to the end); a watch, which
 * ends by a close or by our abort, never goes back to the pool
 * (FORBID_REUSE), and a transfer we abort is closed by curl.
 *
 * The thread sleeps in curl_multi_poll() until a socket, the next start
 * or the next tick; kube_watch_stop() wakes it with curl_multi_wakeup().
 */
#include "kube/kube_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "lib/file.h"
#include "kube/kubereq.h"
#include "lib/log.h"

static uint64_t
kube_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* xorshift64*: jitter and watch timeouts need spread, not secrecy. */
uint64_t
kube_random(struct kube_watch *w)
{
    w->rnd ^= w->rnd >> 12;
    w->rnd ^= w->rnd << 25;
    w->rnd ^= w->rnd >> 27;
    return w->rnd * 2685821657736338717ull;
}

/* Appends to a response body, up to max bytes in all. */
int
kube_body_add(struct kube_res *s, const char *p, size_t n, size_t max)
{
    if (s->body.len + n > max)
        return -1;
    strbuf_add(&s->body, p, n);
    return s->body.failed ? -1 : 0;
}

/* A response body as cJSON parses it: never NULL. */
cJSON *
kube_body_parse(struct kube_res *s)
{
    return cJSON_ParseWithLength(s->body.buf ? s->body.buf : "", s->body.len);
}

void
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

/* --- requests ----------------------------------------------------------- */


static char *
kube_url(struct kube_res *s)
{
    struct kube_watch *w = s->w;
    struct kubereq_target t = {w->cfg.server, s->r->group, s->version,
                               s->r->plural, s->r->selector};
    unsigned timeout =
        KUBE_WATCH_MIN_S +
        (unsigned)(kube_random(w) % (KUBE_WATCH_MAX_S - KUBE_WATCH_MIN_S + 1));

    switch (s->phase) {
    case KUBE_DISCOVER:
        return kubereq_discovery_url(w->cfg.server, s->r->group);
    case KUBE_LIST:
        return kubereq_list_url(&t, KUBE_LIST_LIMIT, s->cont, s->rv_unset,
                                s->rv_last ? s->rv : NULL);
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
    kubelist_reset(&s->list);
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
        kubelist_free(&s->list);
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
        kubelist_init(&s->list, KUBE_ITEM_MAX, KUBE_LIST_REST_MAX);
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
