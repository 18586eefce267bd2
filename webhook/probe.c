/*
 * probe.c - /healthz, /readyz and /metrics on one small internal thread.
 */
#include "webhook/probe.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "webhook/deadline.h"
#include "webhook/http.h"
#include "webhook/metrics.h"

/*
 * The kubelet and one or two scrapers: a few connections at a time. Past
 * PROBE_CONNECTIONS (or PROBE_PER_ADDRESS from one address) a new
 * connection takes the slot of the oldest silent one (deadline.h), so a
 * flood of idle connections cannot starve the kubelet's probe, which
 * opens a connection and sends its GET at once. libmicrohttpd's own limit
 * is higher by the connections shut down and not yet closed.
 */
#define PROBE_CONNECTIONS 256
#define PROBE_PER_ADDRESS 16
#define PROBE_SPARE 128
/* A probe's head and a /metrics request are a few hundred bytes. */
#define PROBE_CONN_MEMORY (8 * 1024)
#define PROBE_TIMEOUT 10
/* From accept to a whole request head: the kubelet sends at once. */
#define PROBE_FIRST_MS 2000

#define PROBE_TEXT "text/plain; charset=utf-8"
#define PROBE_METRICS "text/plain; version=0.0.4; charset=utf-8"

struct probe {
    struct MHD_Daemon *daemon;
    struct metrics *metrics; /* borrowed */
    struct deadline *deadline;
    atomic_bool ready;
};

/* A connection opens (its slot and watch) or closes. */
static void
probe_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                 enum MHD_ConnectionNotificationCode toe)
{
    struct probe *p = cls;
    const union MHD_ConnectionInfo *fd, *peer;

    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        deadline_close(p->deadline, *socket_context);
        *socket_context = NULL;
        return;
    }
    fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    peer = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (fd == NULL)
        return;
    *socket_context = deadline_open(p->deadline, fd->connect_fd,
                                    peer != NULL ? peer->client_addr : NULL);
    if (*socket_context == NULL)
        shutdown(fd->connect_fd, SHUT_RDWR); /* no memory to watch it */
}

/* The accept policy: a slot for the new connection, or it is closed. */
static enum MHD_Result
probe_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    struct probe *p = cls;

    (void)addrlen;
    return deadline_admit(p->deadline, addr) ? MHD_YES : MHD_NO;
}

static struct deadline_conn *
probe_conn(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *info;

    info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info != NULL ? info->socket_context : NULL;
}

static void *
probe_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct deadline_conn *dc = probe_conn(conn);

    (void)cls;
    (void)uri;
    if (dc != NULL)
        deadline_request_line(dc);
    return NULL;
}

static void
probe_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                enum MHD_RequestTerminationCode toe)
{
    struct deadline_conn *dc = probe_conn(conn);

    (void)cls;
    (void)con_cls;
    (void)toe;
    if (dc != NULL)
        deadline_answered(dc);
}

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
    struct deadline_conn *dc;
    char *text;

    (void)version;
    (void)upload;
    /* Answered at the first call; any body that follows is dropped. */
    if (*con_cls != NULL) {
        *upload_size = 0;
        return MHD_YES;
    }
    *con_cls = p;
    if ((dc = probe_conn(conn)) != NULL)
        deadline_request_head(dc);

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
    p->deadline = deadline_new("probe", PROBE_TIMEOUT + 1, PROBE_TIMEOUT + 1,
                               PROBE_FIRST_MS,
                               PROBE_CONNECTIONS, PROBE_PER_ADDRESS);
    if (p->deadline == NULL) {
        snprintf(err, err_len, "out of memory");
        free(p);
        return NULL;
    }

    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_SOCK_ADDR, 0, (void *)addr},
        {MHD_OPTION_CONNECTION_LIMIT, PROBE_CONNECTIONS + PROBE_SPARE, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, PROBE_TIMEOUT, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, PROBE_CONN_MEMORY, NULL},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)probe_connection, p},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)probe_uri, p},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)probe_completed, p},
        {MHD_OPTION_END, 0, NULL},
    };
    http_capture_begin(err, err_len);
    p->daemon =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO |
                             MHD_USE_ERROR_LOG | http_listen_flags(addr),
                         http_listen_port(addr), probe_accept, p, probe_access,
                         p,
                         MHD_OPTION_EXTERNAL_LOGGER, http_log, NULL,
                         MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
    http_capture_end();
    if (p->daemon == NULL) {
        if (err[0] == '\0')
            snprintf(err, err_len, "cannot start the probe listener");
        deadline_free(p->deadline);
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
    deadline_free(p->deadline);
    free(p);
}
