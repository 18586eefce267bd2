/*
 * audit.h - the pieces of `topogate audit` over manifests: reading the
 * inputs into documents, and writing the report as text or JSON.
 */
#ifndef TOPOGATE_CMD_AUDIT_H
#define TOPOGATE_CMD_AUDIT_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "policy/audit/audit.h"

/* Most placeholders one document may leave unrendered and be read. */
#define AUDIT_MAX_UNRENDERED 32

/*
 * A template placeholder taken out of a document before it was read:
 * it blocks only the fields it touches (yaml_unset_placeholders()).
 */
struct audit_unrendered {
    char path[256];  /* the field; a key placeholder: its map */
    char value[64];  /* the placeholder text, cut short */
    int line;
    bool key;
    const char *why; /* static: why the decision does not read it */
};

/* One YAML or JSON document of an input file, or why it has none. */
struct audit_doc {
    size_t file;    /* index into audit_input.files */
    int line;       /* where the document (or the error) starts */
    cJSON *object;  /* owned; NULL when error is set at reading */
    char *error;    /* owned: why it cannot be evaluated (an unrendered
                       placeholder the decision reads may set it after
                       reading, object kept) */
    struct audit_unrendered *unrendered; /* owned */
    size_t n_unrendered;
    struct audit_item item; /* filled by the audit, when object is set */
    bool evaluated;
};

/* --set NAME=VALUE and --env: what renders $NAME and ${NAME}. */
struct audit_vars {
    char **names, **values; /* borrowed from argv */
    size_t n;
    bool env; /* names not set here come from the environment */
};

struct audit_input {
    char **files; /* as given or found; "-" for stdin */
    size_t n_files;
    struct audit_doc *docs;
    size_t n_docs;
    const struct audit_vars *vars; /* borrowed; NULL: no rendering */
};

/*
 * Reads every path (files, directories recursively, "-" for stdin) into
 * docs. Returns 0; -1 when a path cannot be read (reported on stderr,
 * the rest still read); -2 out of memory.
 */
int audit_input_read(struct audit_input *in, char *const *paths, size_t n);

/*
 * The same, rendering each input first as envsubst does, but only the
 * names vars knows (the rest stay, and are reported as placeholders).
 */
int audit_input_read_vars(struct audit_input *in, char *const *paths,
                          size_t n, const struct audit_vars *vars);

/*
 * After the audit: a document whose unrendered placeholders the decision
 * reads becomes an error, as when a placeholder made it unreadable. 0,
 * or -1 out of memory.
 */
int audit_input_judge_unrendered(struct audit_doc *d);
void audit_input_free(struct audit_input *in);

struct audit_summary {
    size_t workloads;
    size_t by_outcome[OUTCOME_DENY + 1];
    size_t mistakes;
    size_t errors;
};

void audit_summarise(const struct audit_input *in, struct audit_summary *sum);

/* The report. colour: ANSI colours for a terminal. */
void audit_write_text(FILE *out, const struct audit_input *in,
                      const struct audit_summary *sum, bool colour);
/* 0, or -1 out of memory. */
int audit_write_json(FILE *out, const struct audit_input *in,
                     const struct audit_summary *sum, const char *policy,
                     bool with_pods);

/*
 * Findings: what CI outputs (JUnit, SARIF) and baselines speak of. A
 * job's or a kind of pod's warn or deny, a manifest mistake, an
 * unreadable document. Each has a stable id (audit_finding.c, derivation
 * in docs/audit.md "Finding ids").
 */
enum audit_rule { RULE_DENY, RULE_WARN, RULE_MISTAKE, RULE_UNREADABLE };

#define AUDIT_ID_LEN 16 /* hex digits of a finding id */

struct audit_finding {
    enum audit_rule rule;
    size_t doc;          /* index into audit_input.docs */
    const char *path;    /* its file, as given ("-": stdin); borrowed */
    int line;
    char id[AUDIT_ID_LEN + 1];
    char *part;          /* "job", "Worker pod", "pod", "" (owned) */
    char *workload;      /* "TrainJob ns/name", "" for unreadable (owned) */
    char *finding;       /* what the id is derived from: the reason, the
                            mistake, the error (owned) */
    char *message;       /* for people, one line (owned) */
    char *fix;           /* borrowed from the decision, or NULL */
    char api_group[128];
    unsigned occurrence; /* 0, or n for the n+1th finding of one key */
    bool known;          /* listed in --baseline */
};

struct audit_findings {
    struct audit_finding *items;
    size_t n;
};

/* Every finding of an evaluated input, in report order. 0, or -1 out of
 * memory (free *out anyway). */
int audit_findings_collect(const struct audit_input *in,
                           struct audit_findings *out);
void audit_findings_free(struct audit_findings *f);

/* "deny", "warn", "mistake", "unreadable". */
const char *audit_rule_name(enum audit_rule r);

/* Whether the finding alone makes the audit fail at --fail-on (known
 * ones included: the caller checks known). */
bool audit_finding_fails(const struct audit_finding *f,
                         enum audit_outcome fail_on);

/*
 * --baseline FILE: marks known the findings whose id it lists. 0; -1
 * with the reason on stderr (cannot be read, a line that is no id).
 */
int audit_baseline_apply(const char *path, struct audit_findings *f);

/* --write-baseline FILE: every finding, one a line, sorted by id. 0;
 * -1 with the reason on stderr. */
int audit_baseline_write(const char *path, const struct audit_findings *f);

/* JUnit XML (the Ant schema CI tools read): a suite per file, a case per
 * workload or unreadable document; failures are the findings that fail
 * at fail_on and are not known. 0, or -1 out of memory. */
int audit_write_junit(FILE *out, const struct audit_input *in,
                      const struct audit_findings *f, const char *policy,
                      enum audit_outcome fail_on);

/* SARIF 2.1.0, one run; baseline: results carry baselineState. 0, or -1
 * out of memory. */
int audit_write_sarif(FILE *out, const struct audit_input *in,
                      const struct audit_findings *f, const char *policy,
                      bool baseline);

#endif
