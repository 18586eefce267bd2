/*
 * probe.c - /healthz, /readyz and /metrics on one small internal thread.
 */
#include "webhook/probe.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "webhook/http.h"
#include "webhook/metrics.h"

/* The kubelet and one or two scrapers: a few connections at a time. */
#define PROBE_CONNECTIONS 64
#define PROBE_TIMEOUT 10

#define PROBE_TEXT "text/plain; charset=utf-8"
#define PROBE_METRICS "text/plain; version=0.0.4; charset=utf-8"

struct probe {
    struct MHD_Daemon *daemon;
    struct metrics *metrics; /* borrowed */
    atomic_bool ready;
};

static enum MHD_Result
probe_text(struct MHD_Connection *conn, unsigned int code, const char *text,
           const char *allow)
{
    /* Static strings: libmicrohttpd neither copies nor frees them. */
    return http_reply(conn, code, PROBE_TEXT, (char *)text, strlen(text), false,
                      allow);
}

static enum MHD_Result
probe_access(void *cls, struct MHD_Connection *conn, const char *url,
             const char *method, const char *version, const char *upload,
             size_t *upload_size, void **con_cls)
{
    struct probe *p = cls;
    char *text;

    (void)version;
    (void)upload;
    /* Answered at the first call; any body that follows is dropped. */
    if (*con_cls != NULL) {
        *upload_size = 0;
        return MHD_YES;
    }
    *con_cls = p;

    if (strcmp(url, "/healthz") != 0 && strcmp(url, "/readyz") != 0 &&
        strcmp(url, "/metrics") != 0)
        return probe_text(conn, 404, "not found\n", NULL);
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
        strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return probe_text(conn, 405, "method not allowed\n", "GET, HEAD");
    if (strcmp(url, "/healthz") == 0)
        return probe_text(conn, 200, "ok", NULL);
    if (strcmp(url, "/readyz") == 0)
        return atomic_load(&p->ready)
                   ? probe_text(conn, 200, "ready", NULL)
                   : probe_text(conn, 503, "not ready", NULL);
    text = metrics_render(p->metrics);
    if (text == NULL)
        return probe_text(conn, 500, "out of memory\n", NULL);
    return http_reply(conn, 200, PROBE_METRICS, text, strlen(text), true, NULL);
}

struct probe *
probe_start(const struct sockaddr *addr, struct metrics *m, char *err,
            size_t err_len)
{
    struct probe *p;

    p = calloc(1, sizeof(*p));
    if (p == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    p->metrics = m;
    atomic_init(&p->ready, false);

    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_SOCK_ADDR, 0, (void *)addr},
        {MHD_OPTION_CONNECTION_LIMIT, PROBE_CONNECTIONS, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, PROBE_TIMEOUT, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    http_capture_begin(err, err_len);
    p->daemon =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
                             MHD_USE_ERROR_LOG | http_listen_flags(addr),
                         http_listen_port(addr), NULL, NULL, probe_access, p,
                         MHD_OPTION_EXTERNAL_LOGGER, http_log, NULL,
                         MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    http_capture_end();
    if (p->daemon == NULL) {
        if (err[0] == '\0')
            snprintf(err, err_len, "cannot start the probe listener");
        free(p);
        return NULL;
    }
    return p;
}

void
probe_set_ready(struct probe *p, bool ready)
{
    atomic_store(&p->ready, ready);
}

void
probe_stop(struct probe *p)
{
    if (p == NULL)
        return;
    MHD_stop_daemon(p->daemon);
    free(p);
}
