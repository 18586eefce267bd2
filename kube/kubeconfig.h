/*
 * kubeconfig.h - for kube.c only: what the config loaders (kube.h) hold
 * in memory, made into files that libcurl can be given.
 */
#ifndef TOPOGATE_KUBECONFIG_H
#define TOPOGATE_KUBECONFIG_H

#include <stddef.h>

#include "kube/kube.h"

/*
 * libcurl's GnuTLS backend takes no CA, certificate or key from memory
 * (CURLOPT_CAINFO_BLOB is not built in). Writes each of c's *_pem to a
 * 0600 file in a new private directory under $TMPDIR (or /tmp) and
 * points the matching *_file at it. *dir: the directory, owned, or NULL
 * when there was nothing to write. 0, or -1 + err (files made so far
 * stay for kubeconfig_pem_remove()).
 */
int kubeconfig_pem_files(struct kube_config *c, char **dir, char *err,
                         size_t err_len);

/* Removes what kubeconfig_pem_files() wrote. NULL: no-op. */
void kubeconfig_pem_remove(const char *dir);

#endif
