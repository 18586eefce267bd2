/*
 * audit.h - one workload object judged as the cluster would judge it:
 * the job itself (job kinds), and each kind of pod it creates, through
 * decide(); plus the manifest mistakes of lint.h. No I/O.
 */
#ifndef TOPOGATE_AUDIT_H
#define TOPOGATE_AUDIT_H

#include <stdbool.h>

#include "policy/decision.h"
#include "policy/kinds/expand.h"
#include "policy/audit/lint.h"
#include "policy/table/snapshot.h"

/* What the audit says of a workload, worst first when compared. */
enum audit_outcome {
    OUTCOME_SKIPPED,
    OUTCOME_ALLOW,
    OUTCOME_PATCH,
    OUTCOME_WARN,
    OUTCOME_DENY,
};

struct audit_pod {
    const struct pod_group *group; /* borrowed from the item's expansion */
    struct decision d;
    const char *ignored; /* why decide() left it alone, or NULL */
};

struct audit_item {
    struct expansion e;
    bool has_job;        /* a job kind: job holds its job-level decision */
    struct decision job;
    struct audit_pod *pods;
    size_t n_pods;
    struct lint mistakes;
    enum audit_outcome outcome;
};

/*
 * Fills *out from obj (borrowed; it must outlive *out). rt: runtimes in
 * the same input, or NULL (then the view's are used); view: the cluster
 * view, or NULL. 0, or -1 out of memory (free *out anyway).
 */
struct view;
int audit_object(const struct snapshot *s, const struct view *view,
                 const cJSON *obj, const struct runtimes *rt,
                 struct audit_item *out);

void audit_item_free(struct audit_item *it);

/*
 * Why a template placeholder taken out of obj at path (a key of that map
 * when key is set) cannot change the audit of it: a static sentence, or
 * NULL when it may (a GPU count, the shape of a governed job...).
 */
const char *audit_unread_field(const struct audit_item *it, const cJSON *obj,
                               const char *path, bool key);

const char *outcome_name(enum audit_outcome o);

/* Whether a pod has a DRA claim that is not a ComputeDomain channel's:
 * one that may hold GPUs, read through the view when it is judged. */
bool audit_pod_claims(const cJSON *pod);

/*
 * The GPUs a pod holds as decide() reads them: nvidia.com/gpu and those
 * its DRA claims ask for through view (NULL: none read). A claim of
 * allocationMode All counts 1 here (the node's count is known only
 * once its nodes are). 0 when it asks for none.
 */
long audit_pod_gpus(const struct view *view, const cJSON *pod);

/* The outcome a decision stands for. */
enum audit_outcome outcome_of(const struct decision *d);

#endif
