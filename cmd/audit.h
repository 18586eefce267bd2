/*
 * audit.h - the pieces of `topogate audit` over manifests: reading the
 * inputs into documents, and writing the report as text or JSON.
 */
#ifndef TOPOGATE_CMD_AUDIT_H
#define TOPOGATE_CMD_AUDIT_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "policy/audit.h"

/* One YAML or JSON document of an input file, or why it has none. */
struct audit_doc {
    size_t file;    /* index into audit_input.files */
    int line;       /* where the document (or the error) starts */
    cJSON *object;  /* owned; NULL when error is set */
    char *error;    /* owned: why it cannot be evaluated */
    struct audit_item item; /* filled by the audit, when object is set */
    bool evaluated;
};

struct audit_input {
    char **files; /* as given or found; "-" for stdin */
    size_t n_files;
    struct audit_doc *docs;
    size_t n_docs;
};

/*
 * Reads every path (files, directories recursively, "-" for stdin) into
 * docs. Returns 0; -1 when a path cannot be read (reported on stderr,
 * the rest still read); -2 out of memory.
 */
int audit_input_read(struct audit_input *in, char *const *paths, size_t n);
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
