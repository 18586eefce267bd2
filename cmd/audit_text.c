/*
 * audit_text.c - the audit report for people: grouped by file and
 * workload, one line per finding, colour only on a terminal, and a
 * summary line at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/audit.h"
#include "base/utf8.h"

enum { NAME_WIDTH = 58 };

struct pen {
    FILE *out;
    bool colour;
};

static const char *
colour_of(enum audit_outcome o)
{
    static const char *const colours[] = {
        [OUTCOME_SKIPPED] = "\033[2m", [OUTCOME_ALLOW] = "\033[32m",
        [OUTCOME_PATCH] = "\033[36m",  [OUTCOME_WARN] = "\033[33m",
        [OUTCOME_DENY] = "\033[1;31m",
    };
    return colours[o];
}

static void
outcome(const struct pen *p, enum audit_outcome o)
{
    if (p->colour)
        fprintf(p->out, "%s%s\033[0m", colour_of(o), outcome_name(o));
    else
        fputs(outcome_name(o), p->out);
}

static const char *
file_name(const struct audit_input *in, size_t i)
{
    return strcmp(in->files[i], "-") == 0 ? "<stdin>" : in->files[i];
}

/* "    label    text", the label column 13 wide. */
static void
row(const struct pen *p, const char *label, const char *text)
{
    fprintf(p->out, "    %-12s ", label);
    /* A NUL read from the input (base/utf8.h) is written as \0. */
    for (; *text; text++)
        if ((unsigned char)*text == UTF8_NUL_STANDIN)
            fputs("\\0", p->out);
        else
            fputc(*text, p->out);
    fputc('\n', p->out);
}

/* What one decision says: reason, fix, warnings, the fields it patches. */
static void
decision_rows(const struct pen *p, const struct decision *d)
{
    if (d->reason && d->reason[0])
        row(p, "  reason", d->reason);
    if (d->fix)
        row(p, "  fix", d->fix);
    /* Warn mode repeats the reason and the fix as warnings. */
    for (size_t i = 0; i < d->n_warnings; i++)
        if (!d->reason || strcmp(d->warnings[i], d->reason) != 0)
            if (!d->fix || !strstr(d->fix, d->warnings[i]))
                row(p, "  warning", d->warnings[i]);
    if (d->n_ops > 0) {
        char *fields = decision_fields(d);
        char text[256];
        snprintf(text, sizeof(text), "%zu op%s: %s", d->n_ops,
                 d->n_ops == 1 ? "" : "s", fields ? fields : "?");
        row(p, "  patch", text);
        free(fields);
    }
}

static void
pod_rows(const struct pen *p, const struct audit_pod *pod)
{
    const struct pod_group *g = pod->group;
    char label[64], count[24];

    if (g->replicas < 0)
        snprintf(count, sizeof(count), "each node");
    else
        snprintf(count, sizeof(count), "x%ld", g->replicas);
    snprintf(label, sizeof(label), "%s%spod %s", g->role, g->role[0] ? " " : "",
             count);
    fprintf(p->out, "    %-30s ", label);
    outcome(p, outcome_of(&pod->d));
    if (pod->ignored)
        fprintf(p->out, " (not governed: %s)", pod->ignored);
    fputc('\n', p->out);
    if (!pod->ignored)
        decision_rows(p, &pod->d);
}

static void
item_rows(const struct pen *p, const struct audit_doc *doc)
{
    const struct audit_item *it = &doc->item;
    char name[300];
    int n;

    n = snprintf(name, sizeof(name), "%s %s%s%s", it->e.kind, it->e.namespace,
                 it->e.namespace[0] ? "/" : "",
                 it->e.name[0] ? it->e.name : "(no name)");
    fprintf(p->out, "  %s%*s line %-5d ", name,
            n < NAME_WIDTH ? NAME_WIDTH - n : 0, "", doc->line);
    outcome(p, it->outcome);
    fputc('\n', p->out);
    if (it->e.note)
        row(p, "note", it->e.note);
    for (size_t i = 0; i < doc->n_unrendered; i++) {
        const struct audit_unrendered *u = &doc->unrendered[i];
        char text[512];
        snprintf(text, sizeof(text),
                 "line %d: %s is '%s', an unrendered placeholder this "
                 "decision does not read: %s",
                 u->line, u->path, u->value, u->why ? u->why : "?");
        row(p, "note", text);
    }
    if (it->has_job && it->job.mode[0]) {
        fprintf(p->out, "    %-30s ", "job");
        outcome(p, outcome_of(&it->job));
        fputc('\n', p->out);
        decision_rows(p, &it->job);
    }
    for (size_t i = 0; i < it->n_pods; i++)
        pod_rows(p, &it->pods[i]);
    for (size_t i = 0; i < it->mistakes.n; i++)
        row(p, "mistake", it->mistakes.lines[i]);
}

void
audit_write_text(FILE *out, const struct audit_input *in,
                 const struct audit_summary *sum, bool colour)
{
    struct pen p = {out, colour};
    size_t file = (size_t)-1;

    for (size_t i = 0; i < in->n_docs; i++) {
        const struct audit_doc *d = &in->docs[i];
        if (d->file != file) {
            file = d->file;
            fprintf(out, "%s%s\n", i ? "\n" : "", file_name(in, file));
        }
        if (d->error)
            fprintf(out, "  %s  %s:%d: %s\n", d->refused ? "mistake" : "error",
                    file_name(in, d->file), d->line, d->error);
        else
            item_rows(&p, d);
    }
    fprintf(out,
            "%ssummary: %zu file%s, %zu workload%s: %zu deny, %zu warn, "
            "%zu patch, %zu allow, %zu skipped; %zu mistake%s, %zu "
            "unreadable document%s\n",
            in->n_docs ? "\n" : "", in->n_files, in->n_files == 1 ? "" : "s",
            sum->workloads, sum->workloads == 1 ? "" : "s",
            sum->by_outcome[OUTCOME_DENY], sum->by_outcome[OUTCOME_WARN],
            sum->by_outcome[OUTCOME_PATCH], sum->by_outcome[OUTCOME_ALLOW],
            sum->by_outcome[OUTCOME_SKIPPED], sum->mistakes,
            sum->mistakes == 1 ? "" : "s", sum->errors,
            sum->errors == 1 ? "" : "s");
}

void
audit_summarise(const struct audit_input *in, struct audit_summary *sum)
{
    memset(sum, 0, sizeof(*sum));
    for (size_t i = 0; i < in->n_docs; i++) {
        const struct audit_doc *d = &in->docs[i];
        if (d->error) {
            /* Refused by the apiserver: the manifest's mistake. */
            if (d->refused)
                sum->mistakes++;
            else
                sum->errors++;
            continue;
        }
        sum->workloads++;
        sum->by_outcome[d->item.outcome]++;
        sum->mistakes += d->item.mistakes.n;
    }
}
