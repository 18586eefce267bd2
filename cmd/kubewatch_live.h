/*
 * kubewatch_live.h - topogate-kubewatch's side of the live audit: the
 * writes serve asks for on its stdin (kubewatch_live.c).
 */
#ifndef TOPOGATE_KUBEWATCH_LIVE_H
#define TOPOGATE_KUBEWATCH_LIVE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube/kube.h"

/*
 * Reads commands from stdin on a thread of its own until it closes;
 * each answer goes to out, which takes the line (and must be safe to
 * call beside the watch thread's own lines). 0, or -1 + err.
 */
int kubewatch_live_start(const struct kube_config *cfg, void (*out)(cJSON *),
                         char *err, size_t err_len);

#endif
