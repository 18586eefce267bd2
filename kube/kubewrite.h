/*
 * kubewrite.h - one request at a time that changes something in the
 * apiserver (a server-side apply, a POST, a DELETE), for the live audit:
 * topogate-kubewatch does them for serve, which holds no token.
 * Blocking, bounded in time (kubereq.h's timeouts), on the caller's
 * thread; the token file is read again as it rotates.
 */
#ifndef TOPOGATE_KUBEWRITE_H
#define TOPOGATE_KUBEWRITE_H

#include <stddef.h>

#include "kube/kube.h"

struct kube_writer;

/* Copies what it needs of cfg. NULL + err. */
struct kube_writer *kube_writer_new(const struct kube_config *cfg, char *err,
                                    size_t err_len);
void kube_writer_free(struct kube_writer *w);

/*
 * method "PATCH" (body sent as application/apply-patch+yaml: a
 * server-side apply; JSON is YAML), "POST" (application/json) or
 * "DELETE" (no body) of path ("/apis/..." with its query) on the
 * apiserver. The HTTP status, or 0 when none came (why in msg); msg
 * gets the Status message of a failure, cut to msg_len.
 */
long kube_writer_do(struct kube_writer *w, const char *method, const char *path,
                    const char *body, char *msg, size_t msg_len);

#endif
