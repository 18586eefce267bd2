/*
 * decide.h - the policy engine: one admission request in, one decision out.
 *
 * decide() is a pure function of its arguments: no clock, no environment,
 * no I/O, no globals. The request is a borrowed view of the decoded review.
 */
#ifndef TOPOGATE_DECIDE_H
#define TOPOGATE_DECIDE_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "policy/decision.h"
#include "policy/table/snapshot.h"

struct view;
struct runtimes;

struct admission {
    const char *uid;
    const char *namespace; /* may be "" */
    const char *operation; /* "CREATE", "UPDATE", ... */
    const char *kind;      /* request.kind.kind: "Pod" */
    const char *group;     /* request.kind.group: "" for core */
    const cJSON *object;   /* the object to admit */
    const cJSON *old_object; /* UPDATE: the object before; else NULL */
    bool dry_run;
    const struct view *view; /* the cluster view, borrowed; NULL: none */
    /* Trainer runtimes at hand (audit's files, the view's), borrowed;
     * NULL: a TrainJob's runtime is not known. */
    const struct runtimes *runtimes;
};

/*
 * Fills out (already decision_init()ed). Returns 0; -1 only when memory
 * runs out, in which case out holds whatever was built and must still be
 * freed. A deny is a result, not an error.
 */
int decide(const struct snapshot *s, const struct admission *req,
           struct decision *out);

#endif
