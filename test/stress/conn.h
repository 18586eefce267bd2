/*
 * conn.h - one TLS connection to the webhook, as a blocking client.
 *
 * Every call is bounded: the socket has send and receive timeouts, so a
 * silent server makes a call fail instead of hanging. conn_* never exits.
 */
#ifndef STRESS_CONN_H
#define STRESS_CONN_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/ssl.h>

struct conn {
    int fd;
    SSL *ssl;
};

/* One context for every connection: verifies the server with ca_file. */
SSL_CTX *conn_ctx(const char *ca_file);

/*
 * Connects to 127.0.0.1:port and completes the TLS handshake within
 * timeout_ms. 0, or -1 (c is then closed).
 */
int conn_open(struct conn *c, SSL_CTX *ctx, int port, int timeout_ms);

/*
 * The same from source address 127.0.0.(1 + source), so that connections
 * count as coming from several clients (0: the default, 127.0.0.1).
 */
int conn_open_from(struct conn *c, SSL_CTX *ctx, int port, int timeout_ms,
                   int source);

/* Binds socket fd to 127.0.0.(1 + source); 0 for source 0. 0 or -1. */
int conn_bind_source(int fd, int source);

/* Writes all of buf. 0, or -1 when the connection broke. */
int conn_write(struct conn *c, const char *buf, size_t len);

/* One HTTP/1.1 response: status, Connection: close, and the owned body. */
struct response {
    int status;
    bool close;
    char *body;
    size_t body_len;
};

/*
 * Reads one whole response. 0; -1 when the connection ended or timed out
 * before any byte of it came; -2 when it broke in the middle.
 */
int conn_read_response(struct conn *c, struct response *r);
void response_free(struct response *r);

/* Closes politely (close_notify) or, with abrupt, just drops the socket. */
void conn_close(struct conn *c, bool abrupt);

#endif
