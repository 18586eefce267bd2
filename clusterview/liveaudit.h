/*
 * liveaudit.h - serve --live-audit: the GPU pods of training workloads
 * that run in the cluster, judged on the watch thread with the engine
 * and the mode semantics of `topogate audit`, and published: one
 * PolicyReport per namespace (wgpolicyk8s.io/v1alpha2, a result per
 * workload), gauges of the GPUs on the slow path, and one Event on the
 * workload per reason it was found on it. Admission never waits on
 * any of it: it runs on the cluster view's thread (kubewatch.c), which
 * hands it the helper's lines and a moment once a second.
 *
 * serve holds no token: every write is a command line on the helper's
 * stdin (cmd/kubewatch_live.c), answered on its stdout.
 */
#ifndef TOPOGATE_LIVEAUDIT_H
#define TOPOGATE_LIVEAUDIT_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct liveaudit;
struct metrics;
struct server;

/* srv and m are borrowed and must outlive it. NULL out of memory. */
struct liveaudit *liveaudit_new(struct server *srv, struct metrics *m);
void liveaudit_free(struct liveaudit *la);

/*
 * A line of the helper (op and res already read from it): true when it
 * was the live audit's (a pod or report watch's, or a write's answer),
 * false to leave it to the cluster view.
 */
bool liveaudit_line(struct liveaudit *la, const char *op, const char *res,
                    const cJSON *line);

/*
 * view_synced: every resource of the cluster view is listed; until
 * then nothing is written (a pod judged without its nodes is judged
 * again once they come).
 * Judges what changed since the last time, at most once a second (a
 * new policy or view re-judges everything), and queues the writes
 * that follow; then writes what it can of the queue to fd (the
 * helper's stdin, non-blocking; -1: none). now_ms: a monotonic clock.
 */
void liveaudit_tick(struct liveaudit *la, int fd, uint64_t now_ms,
                    bool view_synced);

/* The helper ended: its lists start over, and its queue is dropped. */
void liveaudit_helper_ended(struct liveaudit *la);

#endif
