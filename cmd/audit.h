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
    bool refused;   /* error is a value the apiserver refuses for its
                       type (yamltypes.h): a mistake, not unreadable */
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

#endif
