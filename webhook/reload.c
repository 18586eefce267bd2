/*
 * reload.c - the reload thread: poll, load what changed, swap it in.
 *
 * Loading happens here, never on a request thread: a review only ever
 * takes a reference to whatever snapshot or credentials are current.
 */
#include "webhook/reload.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/file.h"
#include "lib/policyfile.h"
#include "lib/log.h"
#include "webhook/metrics.h"
#include "webhook/server.h"
#include "webhook/tls.h"
#include "lib/watch.h"

struct reload {
    struct reload_config cfg;
    struct server *srv;      /* borrowed */
    struct metrics *metrics; /* borrowed */
    struct watch policy;
    struct watch tls;
    uint64_t digest; /* of the policy in service */
    char serial[48]; /* of the certificate in service */

    pthread_t thread;
    pthread_mutex_t lock; /* guards stop, with wake */
    pthread_cond_t wake;
    bool stop;
};

static void
reload_policy(struct reload *r)
{
    const char *path = r->cfg.policy_path;
    char err[512];
    struct snapshot *s = policyfile_load(path, &r->cfg.opts, err, sizeof(err));

    if (s == NULL) {
        log_warnx("policy reload: %s; policy %016llx stays in service", err,
                  (unsigned long long)r->digest);
        metrics_reload(r->metrics, METRICS_RELOAD_POLICY, false);
        return;
    }
    if (s->digest == r->digest) {
        /* Touched or re-linked, same bytes: nothing to swap. */
        log_debug("policy reload: '%s' is unchanged", path);
        snapshot_unref(s);
        return;
    }
    if (server_set_snapshot(r->srv, s) != 0)
        log_warnx("policy reload: out of memory for metrics labels");
    log_info("policy reloaded: %s digest %016llx mode %s, %zu instance "
             "types (was %016llx)",
             path, (unsigned long long)s->digest, mode_name(s->mode),
             s->n_types, (unsigned long long)r->digest);
    r->digest = s->digest;
    snapshot_unref(s);
    metrics_reload(r->metrics, METRICS_RELOAD_POLICY, true);
}

static void
reload_tls(struct reload *r)
{
    char err[512], when[32];
    struct tls_creds *c;
    time_t t;
    struct tm tm;

    c = tls_creds_load(r->cfg.cert_path, r->cfg.key_path, r->cfg.client_ca_path,
                       err, sizeof(err));
    if (c == NULL) {
        log_warnx("certificate reload: %s; serial %s stays in service", err,
                  r->serial);
        metrics_reload(r->metrics, METRICS_RELOAD_CERTIFICATE, false);
        return;
    }
    server_set_creds(r->srv, c);
    metrics_set_certificate(r->metrics, tls_creds_not_after(c));
    t = (time_t)tls_creds_not_after(c);
    if (gmtime_r(&t, &tm) == NULL ||
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(when, sizeof(when), "?");
    log_info("certificate reloaded: serial %s, not after %s (was %s)",
             tls_creds_serial(c), when, r->serial);
    snprintf(r->serial, sizeof(r->serial), "%s", tls_creds_serial(c));
    tls_creds_unref(c);
    metrics_reload(r->metrics, METRICS_RELOAD_CERTIFICATE, true);
}

static void *
reload_main(void *arg)
{
    struct reload *r = arg;
    struct timespec until;

    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += r->cfg.interval_ms / 1000;
        until.tv_nsec += (long)(r->cfg.interval_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!r->stop &&
               pthread_cond_timedwait(&r->wake, &r->lock, &until) == 0)
            ;
        if (r->stop)
            break;
        /* Loading takes no lock that reload_stop() waits on. */
        pthread_mutex_unlock(&r->lock);
        if (r->cfg.policy_path != NULL && watch_poll(&r->policy))
            reload_policy(r);
        if (watch_poll(&r->tls))
            reload_tls(r);
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

struct reload *
reload_start(const struct reload_config *cfg, struct server *srv,
             struct metrics *m, char *err, size_t err_len)
{
    const char *tls_paths[] = {cfg->cert_path, cfg->key_path,
                               cfg->client_ca_path};
    pthread_condattr_t attr;
    struct reload *r;
    int rc;

    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    r->cfg = *cfg;
    if (r->cfg.interval_ms == 0)
        r->cfg.interval_ms = 1000;
    r->srv = srv;
    r->metrics = m;
    r->digest = cfg->policy_digest;
    snprintf(r->serial, sizeof(r->serial), "%s",
             cfg->serial != NULL ? cfg->serial : "?");
    watch_init(&r->policy, &cfg->policy_path, cfg->policy_path != NULL);
    watch_init(&r->tls, tls_paths, 3);

    pthread_mutex_init(&r->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&r->wake, &attr);
    pthread_condattr_destroy(&attr);
    rc = pthread_create(&r->thread, NULL, reload_main, r);
    if (rc != 0) {
        snprintf(err, err_len, "cannot start the reload thread: %s",
                 strerror(rc));
        pthread_cond_destroy(&r->wake);
        pthread_mutex_destroy(&r->lock);
        free(r);
        return NULL;
    }
    return r;
}

void
reload_stop(struct reload *r)
{
    if (r == NULL)
        return;
    pthread_mutex_lock(&r->lock);
    r->stop = true;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    pthread_cond_destroy(&r->wake);
    pthread_mutex_destroy(&r->lock);
    free(r);
}
