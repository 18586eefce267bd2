/*
 * http.h - what both listeners (admission, probes) need around
 * libmicrohttpd: answering with a body, listen flags for an address, and
 * its log messages.
 *
 * Nothing here keeps state except a per-thread capture buffer that the
 * caller owns between http_capture_begin() and http_capture_end().
 */
#ifndef TOPOGATE_HTTP_H
#define TOPOGATE_HTTP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

/*
 * Queues code with body as the answer. With owned, body passes to
 * libmicrohttpd (or is freed here on failure); otherwise it must be
 * static. allow, when not NULL, is sent as the Allow header. MHD_NO
 * (close the connection) only when not even that could be built.
 */
/*
 * Once the process is stopping, every response says "Connection: close",
 * so a keep-alive client sends nothing more on a connection about to be
 * closed (a POST the apiserver wrote there could not be retried).
 */
void http_set_closing(void);

enum MHD_Result http_reply(struct MHD_Connection *conn, unsigned int code,
                           const char *content_type, char *body, size_t len,
                           bool owned, const char *allow);

/* MHD_USE_IPv6, or dual stack for "::", as addr needs. */
unsigned int http_listen_flags(const struct sockaddr *addr);

/*
 * The port of addr. MHD_OPTION_SOCK_ADDR is what binds; the port argument
 * of MHD_start_daemon() only appears in its messages ("failed to bind to
 * port N"), where it had better be the right one.
 */
uint16_t http_listen_port(const struct sockaddr *addr);

/*
 * The MHD_OPTION_EXTERNAL_LOGGER callback: lines go to log_warnx(), or
 * while this thread is inside http_capture_begin()/_end(), the last one
 * goes to that buffer instead, so a start-up failure reads as one line.
 */
void http_log(void *cls, const char *fmt, va_list ap);
void http_capture_begin(char *buf, size_t len);
void http_capture_end(void);

#endif
