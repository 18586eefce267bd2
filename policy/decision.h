/*
 * decision.h - what decide() returns: plain data, no I/O.
 *
 * A decision owns its strings, warnings and ops. decision_free() releases
 * them; the struct itself is the caller's, typically on the stack, zeroed
 * by decision_init().
 */
#ifndef TOPOGATE_DECISION_H
#define TOPOGATE_DECISION_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/jsonout.h"

/* The most of an audit-mode patch kept for the log and annotation. */
#define DECISION_WOULD_MAX 2048

/* Kubernetes shows each warning on one line; longer ones are cut. */
#define WARNING_MAX 120

/* What happened to a review, for logs, metrics and audit annotations. */
enum verdict {
    VERDICT_IGNORE, /* not ours: not a governed GPU pod */
    VERDICT_ALLOW,  /* governed, nothing to change */
    VERDICT_PATCH,  /* governed, patched */
    VERDICT_WARN,   /* allowed with a warning that enforce would deny */
    VERDICT_DENY,
};

/*
 * One JSON Patch operation. "add" also replaces an object member; only an
 * array element needs "replace" (an "add" there would insert).
 */
enum op_kind { OP_ADD, OP_REPLACE };

/*
 * An op's path, like its value and the ops array, comes from cJSON's
 * allocator (cJSON_malloc(), plain malloc: nothing sets cJSON's hooks)
 * and is freed with the decision. The value is kept as the JSON text the
 * patch will carry: a patch is a dozen small values, and building them
 * as cJSON trees only to print them cost more than writing them.
 */
struct op {
    enum op_kind kind;
    char *path;  /* RFC 6901 pointer, already escaped */
    char *value; /* compact JSON text */
    size_t value_len;
};

struct decision {
    bool allowed;
    int code;      /* 403 when denied */
    char *message; /* one line, when denied */
    enum verdict verdict; /* what happened, in this mode */
    enum verdict judged;  /* what enforce does: the audit annotation */
    const char *mode;     /* the mode that applied */
    char *reason;         /* one line for the audit annotation */
    char *fix;            /* what to change instead, one line, or NULL */
    char *would_patch;    /* audit mode: the ops it did not make, as JSON
                             Patch text cut at DECISION_WOULD_MAX, or NULL */
    bool finding;         /* a layout or instance-type problem was found */
    const char *instance_type; /* a table row's name, "unknown" or "" */
    const char *known_by; /* how: "pin", "policy", "nodes", "queue",
                             "none"; NULL when not governed. Static. */
    char **warnings;
    size_t n_warnings;
    struct op *ops;
    size_t n_ops;
    size_t cap_ops;       /* ops allocated */
    struct jsonout value; /* the next op's value, as it is written */
};

void decision_init(struct decision *d);
void decision_free(struct decision *d);

/* Frees the ops made so far and empties the list; its array is kept for
 * the ops that follow (decision_free() releases it). */
void decision_drop_ops(struct decision *d);

/* printf-style; cut at WARNING_MAX. Returns 0, or -1 out of memory. */
int decision_warn(struct decision *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* decision_warn(d, "%s", sentence), with d as a void *: the shape of the
 * callbacks that say facts one sentence at a time (nodefacts.h,
 * numafit.h). A sentence said twice is one warning. */
int decision_say(void *d, const char *sentence);

/*
 * The next op's value, emptied: write one JSON value into it (jsonout.h),
 * then make the op of it with decision_add_value() or
 * decision_replace_value().
 */
struct jsonout *decision_value(struct decision *d);

/* An "add" of the value written, at prefix + "/" + key, the key escaped
 * per RFC 6901 ("nvidia.com/gpu" -> "nvidia.com~1gpu"); key may be NULL.
 * 0, or -1 out of memory (the value's too). */
int decision_add_value(struct decision *d, const char *prefix,
                       const char *key);
int decision_replace_value(struct decision *d, const char *path);

/* The same with a cJSON value, printed into the op and deleted (also on
 * failure): for values of the user's shape. 0 or -1. */
int decision_add(struct decision *d, const char *path, cJSON *value);
int decision_replace(struct decision *d, const char *path, cJSON *value);
int decision_add_at(struct decision *d, cJSON *value, const char *prefix,
                    const char *key);

/* One op as JSON Patch text: {"op":"add","path":"...","value":...}. */
void decision_print_op(struct jsonout *o, const struct op *op);

/* Denies with this message (403), replacing any; printf-style. 0 or -1. */
int decision_deny(struct decision *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The fields the ops touch, for people: "hostIPC, /dev/shm, env". Owned;
 * NULL out of memory. */
char *decision_fields(const struct decision *d);

/* Replaces the reason with a copy of reason. 0, or -1 out of memory. */
int decision_set_reason(struct decision *d, const char *reason);

const char *verdict_name(enum verdict v);

#endif
