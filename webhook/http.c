/*
 * http.c - small pieces shared by the admission and probe listeners.
 */
#include "webhook/http.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"

static atomic_bool http_closing;

void
http_set_closing(void)
{
    atomic_store(&http_closing, true);
}

static _Thread_local char *http_capture;
static _Thread_local size_t http_capture_len;

enum MHD_Result
http_reply(struct MHD_Connection *conn, unsigned int code,
           const char *content_type, char *body, size_t len, bool owned,
           const char *allow)
{
    struct MHD_Response *resp;
    enum MHD_Result ret;

    if (owned)
        resp =
            MHD_create_response_from_buffer_with_free_callback(len, body, free);
    else
        resp =
            MHD_create_response_from_buffer(len, body, MHD_RESPMEM_PERSISTENT);
    if (resp == NULL) {
        if (owned)
            free(body);
        return MHD_NO;
    }
    if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                content_type) != MHD_YES ||
        (allow != NULL && MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
                                                  allow) != MHD_YES) ||
        (atomic_load(&http_closing) &&
         MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION,
                                 "close") != MHD_YES)) {
        MHD_destroy_response(resp);
        return MHD_NO;
    }
    ret = MHD_queue_response(conn, code, resp);
    MHD_destroy_response(resp); /* the connection keeps its reference */
    return ret;
}

unsigned int
http_listen_flags(const struct sockaddr *addr)
{
    const struct sockaddr_in6 *in6;

    if (addr->sa_family != AF_INET6)
        return 0;
    in6 = (const struct sockaddr_in6 *)addr;
    /* "[::]" or an empty address: serve IPv4 clients too. */
    if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr))
        return MHD_USE_DUAL_STACK;
    return MHD_USE_IPv6;
}

uint16_t
http_listen_port(const struct sockaddr *addr)
{
    if (addr->sa_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
    return ntohs(((const struct sockaddr_in *)addr)->sin_port);
}

/*
 * libmicrohttpd logs a line for each connection that fails its handshake:
 * a flood of half-open connections would be a flood of lines, and of
 * writes on the request threads. At most HTTP_LOG_BURST a second; the
 * rest are counted and the count is logged with the next line let out.
 */
#define HTTP_LOG_BURST 10

static pthread_mutex_t http_log_lock = PTHREAD_MUTEX_INITIALIZER;
static time_t http_log_second;
static unsigned int http_log_lines;
static unsigned long http_log_dropped;

/* Whether a line may go out now; *dropped: how many were held back. */
static bool
http_log_let(unsigned long *dropped)
{
    struct timespec ts;
    bool let;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    pthread_mutex_lock(&http_log_lock);
    if (ts.tv_sec != http_log_second) {
        http_log_second = ts.tv_sec;
        http_log_lines = 0;
    }
    let = http_log_lines < HTTP_LOG_BURST;
    if (let) {
        http_log_lines++;
        *dropped = http_log_dropped;
        http_log_dropped = 0;
    } else {
        http_log_dropped++;
    }
    pthread_mutex_unlock(&http_log_lock);
    return let;
}

void
http_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];
    unsigned long dropped = 0;

    (void)cls;
    vsnprintf(line, sizeof(line), fmt, ap);
    /* libmicrohttpd says "Failed to bind...\n": make it a clause. */
    line[0] = (char)tolower((unsigned char)line[0]);
    line[strcspn(line, "\n")] = '\0';
    if (http_capture != NULL)
        snprintf(http_capture, http_capture_len, "%s", line);
    else if (!http_log_let(&dropped))
        return;
    else if (dropped > 0)
        log_warnx("libmicrohttpd: %s (and %lu lines held back before it)",
                  line, dropped);
    else
        log_warnx("libmicrohttpd: %s", line);
}

void
http_capture_begin(char *buf, size_t len)
{
    buf[0] = '\0';
    http_capture = buf;
    http_capture_len = len;
}

void
http_capture_end(void)
{
    http_capture = NULL;
    http_capture_len = 0;
}
