/* conn.c - a blocking TLS client connection with bounded waits. */
#include "conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* Headers of a webhook answer are a few hundred bytes. */
#define CONN_HEAD_MAX 8192

SSL_CTX *
conn_ctx(const char *ca_file)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

    if (ctx == NULL)
        return NULL;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (SSL_CTX_load_verify_locations(ctx, ca_file, NULL) != 1) {
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

static void
set_timeouts(int fd, int timeout_ms)
{
    struct timeval tv = {.tv_sec = timeout_ms / 1000,
                         .tv_usec = (timeout_ms % 1000) * 1000};

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int
conn_bind_source(int fd, int source)
{
    struct sockaddr_in from = {.sin_family = AF_INET};

    if (source <= 0)
        return 0;
    /* 127.0.0.0/8 is all loopback on Linux: a client per address. */
    from.sin_addr.s_addr = htonl(INADDR_LOOPBACK + (uint32_t)source);
    return bind(fd, (struct sockaddr *)&from, sizeof(from));
}

int
conn_open(struct conn *c, SSL_CTX *ctx, int port, int timeout_ms)
{
    return conn_open_from(c, ctx, port, timeout_ms, 0);
}

int
conn_open_from(struct conn *c, SSL_CTX *ctx, int port, int timeout_ms,
               int source)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port)};
    int one = 1;

    c->ssl = NULL;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return -1;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (conn_bind_source(c->fd, source) != 0)
        goto fail;
    set_timeouts(c->fd, timeout_ms);
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        goto fail;
    c->ssl = SSL_new(ctx);
    if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1 ||
        SSL_set1_host(c->ssl, "127.0.0.1") != 1 || SSL_connect(c->ssl) != 1)
        goto fail;
    return 0;
fail:
    conn_close(c, true);
    return -1;
}

int
conn_write(struct conn *c, const char *buf, size_t len)
{
    while (len > 0) {
        int n = SSL_write(c->ssl, buf, len > 1 << 20 ? 1 << 20 : (int)len);
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The value of header name in head (NUL-terminated), or NULL. */
static const char *
header(const char *head, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = strstr(head, "\r\n"); p != NULL;
         p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, name, n) == 0 && p[2 + n] == ':')
            return p + 3 + n + strspn(p + 3 + n, " \t");
    }
    return NULL;
}

int
conn_read_response(struct conn *c, struct response *r)
{
    char head[CONN_HEAD_MAX + 1];
    size_t have = 0, body_in_head;
    const char *end = NULL, *v;
    long clen;

    memset(r, 0, sizeof(*r));
    /* The head, a little at a time; what follows it starts the body. */
    while (end == NULL) {
        int n;

        if (have == CONN_HEAD_MAX)
            return -2;
        n = SSL_read(c->ssl, head + have, (int)(CONN_HEAD_MAX - have));
        if (n <= 0)
            return have == 0 ? -1 : -2;
        have += (size_t)n;
        head[have] = '\0';
        end = strstr(head, "\r\n\r\n");
    }
    if (sscanf(head, "HTTP/1.%*d %d", &r->status) != 1)
        return -2;
    v = header(head, "Content-Length");
    if (v == NULL || (clen = strtol(v, NULL, 10)) < 0 || clen > 64 << 20)
        return -2;
    v = header(head, "Connection");
    r->close = v != NULL && strncasecmp(v, "close", 5) == 0;
    r->body_len = (size_t)clen;
    r->body = malloc(r->body_len + 1);
    if (r->body == NULL)
        return -2;
    end += 4;
    body_in_head = have - (size_t)(end - head);
    if (body_in_head > r->body_len)
        body_in_head = r->body_len; /* nothing is pipelined here */
    memcpy(r->body, end, body_in_head);
    for (size_t got = body_in_head; got < r->body_len;) {
        int n = SSL_read(c->ssl, r->body + got, (int)(r->body_len - got));
        if (n <= 0) {
            response_free(r);
            return -2;
        }
        got += (size_t)n;
    }
    r->body[r->body_len] = '\0';
    return 0;
}

void
response_free(struct response *r)
{
    free(r->body);
    r->body = NULL;
}

void
conn_close(struct conn *c, bool abrupt)
{
    if (c->ssl != NULL) {
        if (!abrupt)
            SSL_shutdown(c->ssl);
        SSL_free(c->ssl);
        c->ssl = NULL;
    }
    if (c->fd >= 0) {
        if (abrupt) {
            /* RST instead of FIN: a client that vanished. */
            struct linger lg = {.l_onoff = 1, .l_linger = 0};
            setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        }
        close(c->fd);
        c->fd = -1;
    }
}
