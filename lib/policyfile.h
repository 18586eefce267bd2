/*
 * policyfile.h - the one reader of policy files: start-up, reload, audit,
 * `tables` and `serve -n` all load a policy through it, with the same
 * size cap and the same command-line overrides.
 */
#ifndef TOPOGATE_POLICYFILE_H
#define TOPOGATE_POLICYFILE_H

#include <stddef.h>

#include "policy/table/snapshot.h"

/*
 * Reads path (NULL: the embedded policy) and parses it with opts (may be
 * NULL). Returns an owned snapshot, or NULL with one line in err:
 * "file:line:col: message" for a policy that does not parse, "file:
 * reason" for one that cannot be read.
 */
struct snapshot *policyfile_load(const char *path,
                                 const struct snapshot_opts *opts, char *err,
                                 size_t err_len);

#endif
