/*
 * kubewatch.h - the cluster view kept up to date: the apiserver client,
 * in its own process (topogate-kubewatch, beside topogate), feeds a view
 * index (policy/view/view.h) on a thread of ours, and about once a second,
 * when something a decision reads changed, a new view is built and
 * swapped into the server. Admission never waits on
 * the apiserver: until the first view, and whenever the apiserver is
 * away, reviews decide with the last view or none, and the metrics say
 * so.
 */
#ifndef TOPOGATE_KUBEWATCH_H
#define TOPOGATE_KUBEWATCH_H

#include <stddef.h>

struct metrics;
struct server;
struct view_index;
struct kubewatch;

/*
 * Whether the helper can use this kubeconfig (NULL: the service
 * account): 0, or -1 with the reason in err (the helper's own message
 * went to stderr).
 */
int kubewatch_check(const char *kubeconfig, char *err, size_t err_len);

/*
 * Starts watching with a kubeconfig (NULL: in cluster). srv and m are
 * borrowed and must outlive it. NULL with a reason in err when there is
 * no configuration to use (not in a cluster, a bad kubeconfig).
 */
struct kubewatch *kubewatch_start(const char *kubeconfig, struct server *srv,
                                  struct metrics *m, char *err, size_t err_len);

/*
 * The same, with the live audit on (serve --live-audit): the helper also
 * watches training workloads' GPU pods and our PolicyReports, live
 * judges them on the watch thread and the helper writes what it says.
 * Takes live (freed with w, or at once on failure).
 */
struct liveaudit;
struct kubewatch *kubewatch_start_live(const char *kubeconfig,
                                       struct server *srv, struct metrics *m,
                                       struct liveaudit *live, char *err,
                                       size_t err_len);

/* Stops the watch thread and frees w (and its live audit). NULL is a
 * no-op. */
void kubewatch_stop(struct kubewatch *w);

/*
 * Lists nodes and Kueue's objects once, for `topogate nodes`: waits until
 * every resource is listed (or found not served), at most 30 s. An owned
 * index, or NULL with the reason on stderr.
 */
struct view_index *kubewatch_list_once(const char *kubeconfig);

#endif
