/*
 * judge.h - how bad a layout is on the instance types a pod can land on.
 *
 * The one place the layout rules live: decide() judges pods with it and
 * decide_job() judges the pods a job would create.
 */
#ifndef TOPOGATE_JUDGE_H
#define TOPOGATE_JUDGE_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/decision.h"
#include "policy/pod/placement.h"
#include "policy/table/snapshot.h"
#include "base/strbuf.h"
#include "policy/kinds/workload.h"

/* How bad one candidate instance type would be for this pod. */
enum severity {
    SEV_OK,   /* patch and go */
    SEV_SOFT, /* a warning in every mode */
    SEV_HARD, /* denied in enforce */
};

/* A finding reads as up to three short lines: the problem, then the fix. */
#define FINDING_PARTS 4

struct finding {
    enum severity sev;
    bool unschedulable; /* no point patching a pod that cannot run */
    bool fragmented;    /* split on an NVLink host: a repack would help */
    const struct instance_type *type; /* the row judged worst, or NULL */
    int nics;           /* of type's NIC resource, the fix asks per node */
    struct strbuf parts[FINDING_PARTS];
    size_t n_parts;
};

/*
 * The one place a finding becomes a verdict, for pods and jobs alike:
 * what enforce does with a finding of sev on evidence ev, given whether
 * ops were made, into *judged; what mode does, returned. A refusal needs
 * evidence: a hard finding on none (a guess) only warns.
 */
enum verdict judge_verdict(enum mode mode, enum severity sev, enum evidence ev,
                           bool patched, enum verdict *judged);

/*
 * The opt-out annotation, asked for (or not) by the object: 1 when the
 * policy honours it here (d says so), 0 when not asked or not honoured
 * (d then warns), -1 out of memory.
 */
int judge_opt_out(const struct snapshot *s, const char *ns, bool asked,
                  struct decision *d);

/*
 * A framework's pods governed below the namespace's mode by its switch
 * (policy frameworks: audit, warn): where enforce would have refused
 * (d->judged), says which switch turns the refusal on. 0, or -1 out of
 * memory.
 */
int judge_framework_note(const struct snapshot *s, const char *ns,
                         enum framework fw, struct decision *d);

/* The worst finding over the candidate types of p, into *worst. */
void judge_all(const struct snapshot *s, const struct workload *w,
               const struct placement *p, struct finding *worst);

void finding_free(struct finding *f);

/* Parts 1.. joined with "; ": the fix. NULL when none or out of memory. */
char *finding_fix(const struct finding *f);

/*
 * A finding into a decision; each returns 0, or -1 out of memory.
 * explain: part 0 as the reason, the rest as the fix. warn: each part as
 * its own warning line. deny: the parts on one line as the deny message,
 * then "; extra" when extra is not NULL.
 */
int finding_explain(struct decision *d, const struct finding *f);
int finding_warn(struct decision *d, const struct finding *f);
int finding_deny(struct decision *d, const struct finding *f,
                 const char *extra);

#endif
