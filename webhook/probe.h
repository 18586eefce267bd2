/*
 * probe.h - the plain-HTTP listener for the kubelet and Prometheus:
 * GET /healthz, /readyz and /metrics.
 *
 * Kept apart from the admission port so probes need no certificate and
 * a scrape never competes with reviews. The probe borrows the metrics,
 * which must outlive it.
 */
#ifndef TOPOGATE_PROBE_H
#define TOPOGATE_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

struct metrics;
struct probe;

/*
 * Starts listening on addr; /readyz answers 503 until probe_set_ready().
 * On failure returns NULL with a one-line reason in err.
 */
struct probe *probe_start(const struct sockaddr *addr, struct metrics *m,
                          char *err, size_t err_len);

/* Whether the admission listener is serving: /readyz 200 or 503. */
void probe_set_ready(struct probe *p, bool ready);

/* Closes the listener and frees p. NULL is a no-op. */
void probe_stop(struct probe *p);

#endif
