/*
 * reload.h - picks up a changed policy file and changed TLS files
 * without a restart.
 *
 * One thread polls the files (see watch.h) about once a second. A
 * changed policy is parsed off the request path into a new snapshot and
 * swapped in with server_set_snapshot(); changed certificate, key or
 * client CA files become new credentials for the next handshakes with
 * server_set_creds(). A file that does not load keeps the old one in
 * service, is logged once (a policy as file:line:col: message) and is
 * counted in topogate_reload_total. The server and the metrics are
 * borrowed and must outlive the reload; so must the strings in the
 * config.
 */
#ifndef TOPOGATE_RELOAD_H
#define TOPOGATE_RELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/table/snapshot.h"

struct metrics;
struct server;
struct reload;

struct reload_config {
    const char *policy_path; /* NULL: the embedded policy, not watched */
    uint64_t policy_digest;  /* of the policy loaded at start */
    struct snapshot_opts opts; /* the command line's, on each reload */
    const char *cert_path;
    const char *key_path;
    const char *client_ca_path; /* NULL without --client-ca */
    const char *serial;         /* of the certificate loaded at start */
    unsigned int interval_ms;   /* between polls */
};

/*
 * Starts the thread, taking the files as they are now as the state
 * already loaded. NULL with a reason in err when it cannot start.
 */
struct reload *reload_start(const struct reload_config *cfg, struct server *srv,
                            struct metrics *m, char *err, size_t err_len);

/* Stops the thread (within one poll) and frees r. NULL is a no-op. */
void reload_stop(struct reload *r);

#endif
