/*
 * audit.c - `topogate audit`: manifests (files, directories, stdin) judged
 * by the engine the webhook uses, as a report; or `--review -`, one
 * AdmissionReview on stdin answered through review_respond() exactly as
 * `serve` answers it.
 */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/audit.h"
#include "policy/view/view.h"
#include "cmd/cmd.h"
#include "json/jsonread.h"
#include "policy/table/snapshot.h"
#include "webhook/review.h"
#include "lib/file.h"

/* Exit statuses: nothing at or above --fail-on, something is, usage or
 * unreadable input. */
enum { AUDIT_OK = 0, AUDIT_FAIL = 1, AUDIT_USAGE = 2 };

/* The body is read where it is, into an arena of this one review, as
 * `serve` reads its body buffer into a pool thread's. */
static int
review_stdin(const struct snapshot *s, const struct view *view)
{
    struct review_result r;
    struct jsonarena *arena;
    size_t len;
    char *body = file_read_stream(stdin, SIZE_MAX, &len);
    int status;

    if (body == NULL) {
        fprintf(stderr, "topogate: stdin: %s\n", strerror(errno));
        return AUDIT_USAGE;
    }
    if ((arena = jsonarena_new()) == NULL ||
        review_respond_in_place(arena, s, view, body, len, &r) < 0) {
        fprintf(stderr, "topogate: out of memory\n");
        jsonarena_free(arena);
        free(body);
        return AUDIT_USAGE;
    }
    fwrite(r.body, 1, r.body_len, stdout);
    status = r.http_status == 200 ? AUDIT_OK : AUDIT_USAGE;
    review_result_free(&r);
    jsonarena_free(arena);
    free(body);
    return status;
}

static const char audit_usage[] =
    "usage: topogate audit [--policy FILE] [--mode enforce|warn|audit]\n"
    "                      [-o text|json|junit|sarif] [--nodes FILE]\n"
    "                      [--fail-on deny|warn|never] [--baseline FILE |\n"
    "                      --write-baseline FILE] [--repack] [--with-pods]\n"
    "                      [--set NAME=VALUE]... [--env] PATH... | -\n"
    "       topogate audit --review - [--policy FILE] [--mode MODE] "
    "[--repack]\n"
    "                      [--nodes FILE]\n"
    "\n"
    "PATH is a YAML or JSON file (multi-document, kind: List), a directory\n"
    "(searched for *.yaml *.yml *.json) or - for stdin. Exit status: 0\n"
    "nothing at or above --fail-on (default deny), 1 something is, 2 usage\n"
    "or unreadable input. --review - answers one AdmissionReview on stdin\n"
    "exactly as `serve` would. --repack turns on the policy's jobs.repack,\n"
    "as `serve --repack` does. --set NAME=VALUE (repeatable) and --env\n"
    "(the environment, as envsubst) render $NAME and ${NAME} in the inputs\n"
    "first; a placeholder left unrendered blocks only the fields it is in.\n"
    "--nodes FILE is the cluster as serve's view sees it: `kubectl get\n"
    "nodes,resourceflavors,clusterqueues,localqueues,noderesourcetopologies\n"
    "-o yaml` (any of these kinds, and Trainer's runtimes and DRA's objects,\n"
    "also count among the PATHs).\n"
    "-o junit and -o sarif are for CI and code scanning. --write-baseline\n"
    "FILE writes every finding's id to FILE (exit 0 once written);\n"
    "--baseline FILE then fails only on findings whose id it does not list.\n";

enum audit_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_JUNIT, FORMAT_SARIF };

struct audit_opts {
    const char *review, *policy, *mode, *nodes;
    const char *baseline, *write_baseline;
    enum audit_format format;
    bool with_pods, repack;
    enum audit_outcome fail_on; /* OUTCOME_SKIPPED: never */
    struct audit_vars vars;     /* names and values point into argv */
};

/* NAME=VALUE, NAME a shell variable name: split in place. */
static int
add_var(struct audit_vars *v, char *arg)
{
    char *eq = strchr(arg, '=');
    char **names, **values;

    if (eq == NULL || eq == arg ||
        strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                    "0123456789_") != (size_t)(eq - arg) ||
        (*arg >= '0' && *arg <= '9')) {
        fprintf(stderr, "topogate audit: --set takes NAME=VALUE, not '%s'\n",
                arg);
        return -1;
    }
    if ((names = realloc(v->names, (v->n + 1) * sizeof(*names))) == NULL)
        return -1;
    v->names = names;
    if ((values = realloc(v->values, (v->n + 1) * sizeof(*values))) == NULL)
        return -1;
    v->values = values;
    *eq = '\0';
    v->names[v->n] = arg;
    v->values[v->n++] = eq + 1;
    return 0;
}

static int
parse_fail_on(const char *word, enum audit_outcome *out)
{
    if (strcmp(word, "deny") == 0)
        *out = OUTCOME_DENY;
    else if (strcmp(word, "warn") == 0)
        *out = OUTCOME_WARN;
    else if (strcmp(word, "never") == 0)
        *out = OUTCOME_SKIPPED;
    else
        return -1;
    return 0;
}

/* Runtimes first: a TrainJob may come before the runtime it names. */
static int
collect_runtimes(const struct audit_input *in, struct runtimes *rt)
{
    rt->n = 0;
    if ((rt->items = calloc(in->n_docs + 1, sizeof(*rt->items))) == NULL)
        return -1;
    for (size_t i = 0; i < in->n_docs; i++)
        if (in->docs[i].object && expand_is_runtime(in->docs[i].object))
            rt->items[rt->n++] = in->docs[i].object;
    return 0;
}

/*
 * The view of --nodes and of the view's objects (view_index_put()) among
 * the inputs; NULL in *out when there are none (decisions as without a
 * cluster). -1 out of memory.
 */
static int
input_view(struct view_index *x, bool nodes_given,
           const struct audit_input *in, struct view **out)
{
    bool any = nodes_given;
    int rc;

    *out = NULL;
    for (size_t i = 0; i < in->n_docs; i++) {
        /* Runtimes among the inputs are audit's own (collect_runtimes). */
        if (in->docs[i].object && !expand_is_runtime(in->docs[i].object) &&
            (rc = view_index_put(x, in->docs[i].object)) != 0) {
            if (rc < 0)
                return -1;
            any = true;
        }
    }
    if (any && (*out = view_build(x)) == NULL)
        return -1;
    return 0;
}

static int
evaluate(const struct snapshot *s, const struct view *view,
         struct audit_input *in)
{
    struct runtimes rt;
    int rc = 0;

    if (collect_runtimes(in, &rt) < 0)
        return -1;
    for (size_t i = 0; i < in->n_docs && rc == 0; i++) {
        struct audit_doc *d = &in->docs[i];
        if (d->object == NULL)
            continue;
        d->evaluated = true;
        rc = audit_object(s, view, d->object, &rt, &d->item);
        if (rc == 0 && audit_input_judge_unrendered(d) < 0)
            rc = -1;
    }
    free(rt.items);
    return rc;
}

/* Errors and mistakes count as warnings: CI should not pass them quietly. */
static bool
fails(const struct audit_summary *sum, enum audit_outcome fail_on)
{
    if (fail_on == OUTCOME_SKIPPED)
        return false;
    for (int o = fail_on; o <= OUTCOME_DENY; o++)
        if (sum->by_outcome[o] > 0)
            return true;
    return fail_on <= OUTCOME_WARN && (sum->mistakes > 0 || sum->errors > 0);
}

/* With a baseline: only the findings it does not list fail. */
static bool
new_findings_fail(const struct audit_findings *f, enum audit_outcome fail_on)
{
    for (size_t i = 0; i < f->n; i++)
        if (!f->items[i].known && audit_finding_fails(&f->items[i], fail_on))
            return true;
    return false;
}

/* On stderr, so that the report itself stays as without a baseline. */
static void
baseline_note(const struct audit_opts *o, const struct audit_findings *f)
{
    size_t known = 0, failing = 0;

    for (size_t i = 0; i < f->n; i++) {
        known += f->items[i].known;
        failing += !f->items[i].known &&
                   audit_finding_fails(&f->items[i], o->fail_on);
    }
    fprintf(stderr,
            "topogate audit: baseline %s: %zu finding%s, %zu in the "
            "baseline, %zu new (%zu failing at --fail-on)\n",
            o->baseline, f->n, f->n == 1 ? "" : "s", known, f->n - known,
            failing);
    for (size_t i = 0; i < f->n; i++)
        if (!f->items[i].known &&
            audit_finding_fails(&f->items[i], o->fail_on))
            fprintf(stderr, "  new %s %s %s:%d: %s\n", f->items[i].id,
                    audit_rule_name(f->items[i].rule), f->items[i].path,
                    f->items[i].line, f->items[i].message);
}

static int
write_report(const struct snapshot *s, const struct audit_opts *o,
             const struct audit_input *in, const struct audit_summary *sum,
             const struct audit_findings *f)
{
    const char *no_colour = getenv("NO_COLOR");

    switch (o->format) {
    case FORMAT_JSON:
        return audit_write_json(stdout, in, sum, s->origin, o->with_pods);
    case FORMAT_JUNIT:
        return audit_write_junit(stdout, in, f, s->origin, o->fail_on);
    case FORMAT_SARIF:
        return audit_write_sarif(stdout, in, f, s->origin,
                                 o->baseline != NULL);
    case FORMAT_TEXT:
        break;
    }
    audit_write_text(stdout, in, sum,
                     isatty(STDOUT_FILENO) &&
                         (no_colour == NULL || *no_colour == '\0'));
    return 0;
}

static int
audit_paths(const struct snapshot *s, struct view_index *x,
            const struct audit_opts *o, char *const *paths, size_t n)
{
    struct audit_input in;
    struct audit_summary sum;
    struct audit_findings f = {0};
    struct view *view = NULL;
    int read = audit_input_read_vars(&in, paths, n, &o->vars), status;

    if (read == -2 || input_view(x, o->nodes != NULL, &in, &view) < 0 ||
        evaluate(s, view, &in) < 0 || audit_findings_collect(&in, &f) < 0) {
        fprintf(stderr, "topogate audit: out of memory\n");
        status = AUDIT_USAGE;
        goto out;
    }
    audit_summarise(&in, &sum);
    /* A baseline that cannot be read is a usage error, before any report. */
    if (o->baseline && audit_baseline_apply(o->baseline, &f) < 0) {
        status = AUDIT_USAGE;
        goto out;
    }
    if (write_report(s, o, &in, &sum, &f) < 0)
        fprintf(stderr, "topogate audit: out of memory\n");
    if (o->baseline)
        baseline_note(o, &f);
    if (read < 0) {
        if (o->write_baseline)
            fprintf(stderr, "topogate audit: --write-baseline %s not "
                            "written: a path could not be read\n",
                    o->write_baseline);
        status = AUDIT_USAGE;
    } else if (o->write_baseline) {
        /* Every finding is now in the baseline: none is new. */
        status = audit_baseline_write(o->write_baseline, &f) < 0 ? AUDIT_USAGE
                                                                 : AUDIT_OK;
    } else if (o->baseline) {
        status = new_findings_fail(&f, o->fail_on) ? AUDIT_FAIL : AUDIT_OK;
    } else {
        status = fails(&sum, o->fail_on) ? AUDIT_FAIL : AUDIT_OK;
    }
out:
    audit_findings_free(&f);
    view_unref(view); /* decisions name its kinds: kept until here */
    audit_input_free(&in);
    return status;
}

/* -o's words, in enum audit_format order. */
static int
parse_format(const char *word, enum audit_format *out)
{
    static const char *const names[] = {"text", "json", "junit", "sarif"};

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(word, names[i]) == 0) {
            *out = (enum audit_format)i;
            return 0;
        }
    return -1;
}

static int
parse_options(int argc, char **argv, struct audit_opts *o)
{
    static const struct option options[] = {
        {"review", required_argument, NULL, 'r'},
        {"policy", required_argument, NULL, 'p'},
        {"mode", required_argument, NULL, 'm'},
        {"output", required_argument, NULL, 'o'},
        {"fail-on", required_argument, NULL, 'f'},
        {"with-pods", no_argument, NULL, 'w'},
        {"repack", no_argument, NULL, 'R'},
        {"nodes", required_argument, NULL, 'N'},
        {"set", required_argument, NULL, 's'},
        {"baseline", required_argument, NULL, 'b'},
        {"write-baseline", required_argument, NULL, 'W'},
        {"env", no_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    memset(o, 0, sizeof(*o));
    o->fail_on = OUTCOME_DENY;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", options, NULL)) != -1) {
        switch (c) {
        case 'r':
            o->review = optarg;
            break;
        case 'p':
            o->policy = optarg;
            break;
        case 'm':
            o->mode = optarg;
            break;
        case 'o':
            if (parse_format(optarg, &o->format) < 0) {
                fprintf(stderr, "topogate audit: -o takes text, json, junit "
                                "or sarif\n");
                return -1;
            }
            break;
        case 'b':
            o->baseline = optarg;
            break;
        case 'W':
            o->write_baseline = optarg;
            break;
        case 'f':
            if (parse_fail_on(optarg, &o->fail_on) < 0) {
                fprintf(stderr, "topogate audit: --fail-on takes deny, warn "
                                "or never\n");
                return -1;
            }
            break;
        case 'w':
            o->with_pods = true;
            break;
        case 'R':
            o->repack = true;
            break;
        case 'N':
            o->nodes = optarg;
            break;
        case 's':
            if (add_var(&o->vars, optarg) < 0)
                return -1;
            break;
        case 'e':
            o->vars.env = true;
            break;
        case 'h':
            fputs(audit_usage, stdout);
            return 1;
        default:
            fputs(audit_usage, stderr);
            return -1;
        }
    }
    if (o->baseline && o->write_baseline) {
        fprintf(stderr, "topogate audit: --baseline and --write-baseline "
                        "do not go together: write a new baseline, or "
                        "check against one\n");
        return -1;
    }
    if (o->review && (o->baseline || o->write_baseline ||
                      o->format >= FORMAT_JUNIT)) {
        fprintf(stderr, "topogate audit: --review - answers with an "
                        "AdmissionReview: no -o junit|sarif, --baseline or "
                        "--write-baseline\n");
        return -1;
    }
    return 0;
}

int
cmd_audit(int argc, char **argv)
{
    struct audit_opts o;
    struct snapshot_opts opts;
    struct view_index *x = NULL;
    struct snapshot *s;
    int rc = parse_options(argc, argv, &o), status;

    if (rc == 0 && (o.review ? strcmp(o.review, "-") != 0 || optind != argc
                             : optind == argc)) {
        fputs(audit_usage, stderr);
        rc = -1;
    }
    if (rc != 0 || cmd_policy_opts(o.mode, o.repack, &opts) < 0 ||
        (s = cmd_load_policy(o.policy, &opts)) == NULL) {
        free(o.vars.names);
        free(o.vars.values);
        return rc > 0 ? AUDIT_OK : AUDIT_USAGE;
    }
    if ((x = view_index_new()) == NULL ||
        (o.nodes && cmd_view_read(x, o.nodes) < 0)) {
        status = AUDIT_USAGE;
        goto out;
    }
    if (o.review) {
        struct view *v = o.nodes ? view_build(x) : NULL;
        status = o.nodes && v == NULL ? AUDIT_USAGE : review_stdin(s, v);
        view_unref(v);
    } else {
        status = audit_paths(s, x, &o, argv + optind, (size_t)(argc - optind));
    }
out:
    free(o.vars.names);
    free(o.vars.values);
    view_index_free(x);
    snapshot_unref(s);
    return status;
}
