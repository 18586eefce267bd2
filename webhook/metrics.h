/*
 * metrics.h - counters for /metrics, in the Prometheus text format.
 *
 * The request path (metrics_review, metrics_http) only does atomic
 * increments: no lock, no allocation. metrics_set_policy() runs at start
 * and at reload. struct metrics is owned by whoever called metrics_new();
 * metrics_render() returns an owned string.
 */
#ifndef TOPOGATE_METRICS_H
#define TOPOGATE_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "policy/decision.h"
#include "policy/table/snapshot.h"

struct metrics;

/* NULL when out of memory. */
struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/*
 * Takes the snapshot's instance-type names as the only instance_type
 * labels besides "unknown" and "none", and sets topogate_policy_info.
 * Names from an earlier policy stay, so no counter ever goes backwards.
 * Returns 0, or -1 when out of memory (labels seen so far stay valid).
 */
int metrics_set_policy(struct metrics *m, const struct snapshot *s);

/*
 * Counts one review. ok is false for a review that got no decision (400,
 * 500): decision="error". An instance type the policy did not name counts
 * as "unknown", so a label is never a string a client chose.
 */
void metrics_review(struct metrics *m, bool ok, enum verdict v,
                    const char *instance_type, uint64_t micros);

/* Counts one response of the admission listener by status code. */
void metrics_http(struct metrics *m, int code);

/* What a reload reloaded: the policy file, or the TLS files. */
enum metrics_reload {
    METRICS_RELOAD_POLICY,
    METRICS_RELOAD_CERTIFICATE, /* certificate, key and client CA */
    METRICS_RELOADS
};

/* Counts one reload attempt; a failed one kept the old in service. */
void metrics_reload(struct metrics *m, enum metrics_reload what, bool ok);

/* notAfter (Unix seconds) of the serving certificate now in use. */
void metrics_set_certificate(struct metrics *m, int64_t not_after);

/*
 * The cluster view now served: GPU nodes and kinds in it, whether every
 * watched resource is listed and watched, and when it was last known
 * current (Unix seconds: built or confirmed with every resource in sync;
 * 0 keeps the time given before). The age is rendered from the clock.
 */
void metrics_set_view(struct metrics *m, size_t nodes, size_t kinds,
                      bool synced, int64_t built_at);

/* One governed review: what enforce does with it, in which mode. */
void metrics_judged(struct metrics *m, enum verdict judged, const char *mode);

/* One governed review, by how its hardware was known (decision.h). */
void metrics_known_by(struct metrics *m, const char *how);

/* One transition of a watch loop (kube.c names the reasons). */
void metrics_watch_restart(struct metrics *m, const char *reason);

/*
 * Series rendered elsewhere, appended to the exposition as they are
 * (whole lines, HELP and TYPE included): the live audit's. Takes text
 * (malloc'd; NULL: none), replacing what was set before.
 */
void metrics_set_extra(struct metrics *m, char *text);

/* The exposition text, owned by the caller; NULL when out of memory. */
char *metrics_render(struct metrics *m);

#endif
