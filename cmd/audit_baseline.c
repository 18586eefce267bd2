/*
 * audit_baseline.c - findings accepted as they are: --write-baseline
 * writes every finding's id, one a line; --baseline reads them back so
 * that only findings not listed fail the audit. The file is text, sorted
 * by id, so that a change to it reads as a diff of findings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/audit.h"
#include "lib/file.h"

static const char baseline_header[] =
    "# topogate audit baseline (topogate audit --write-baseline): the\n"
    "# findings accepted as they are. One a line: its id, then the rule,\n"
    "# the file and the finding, for people. With --baseline FILE only\n"
    "# findings whose id is not listed here fail the audit.\n";

static int
cmp_id(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool
is_id(const char *s, size_t n)
{
    if (n != AUDIT_ID_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* The ids of text, into ids (pointing into text, NUL-terminated there). */
static int
parse(const char *path, char *text, char ***ids, size_t *n)
{
    char *line = text, *next;
    int lineno = 0;

    *n = 0;
    for (; line && *line; line = next) {
        size_t len;
        char **grown;
        lineno++;
        if ((next = strchr(line, '\n')) != NULL)
            *next++ = '\0';
        if (*line == '\0' || *line == '#')
            continue;
        len = strcspn(line, " \t\r");
        if (!is_id(line, len)) {
            fprintf(stderr,
                    "topogate audit: %s:%d: not a finding id (16 hex digits, "
                    "lower case, first on the line): '%.*s'\n",
                    path, lineno, (int)(len > 40 ? 40 : len), line);
            return -1;
        }
        line[len] = '\0';
        if ((grown = realloc(*ids, (*n + 1) * sizeof(*grown))) == NULL) {
            fprintf(stderr, "topogate audit: out of memory\n");
            return -1;
        }
        *ids = grown;
        (*ids)[(*n)++] = line;
    }
    return 0;
}

int
audit_baseline_apply(const char *path, struct audit_findings *f)
{
    size_t len, n = 0;
    char *text = file_read(path, FILE_MAX, &len), **ids = NULL;
    int rc;

    if (text == NULL) {
        fprintf(stderr, "topogate audit: --baseline %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    if (memchr(text, '\0', len) != NULL) {
        fprintf(stderr, "topogate audit: --baseline %s: not a text file\n",
                path);
        free(text);
        return -1;
    }
    if ((rc = parse(path, text, &ids, &n)) == 0) {
        if (n > 0)
            qsort(ids, n, sizeof(*ids), cmp_id);
        for (size_t i = 0; i < f->n; i++) {
            const char *key = f->items[i].id;
            f->items[i].known =
                n > 0 && bsearch(&key, ids, n, sizeof(*ids), cmp_id) != NULL;
        }
    }
    free(ids);
    free(text);
    return rc;
}

static int
cmp_finding(const void *a, const void *b)
{
    const struct audit_finding *x = *(const struct audit_finding *const *)a;
    const struct audit_finding *y = *(const struct audit_finding *const *)b;

    return strcmp(x->id, y->id);
}

/* One line: newlines in a message (none today) would split the entry. */
static void
put_line(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, out);
}

int
audit_baseline_write(const char *path, const struct audit_findings *f)
{
    const struct audit_finding **sorted = calloc(f->n + 1, sizeof(*sorted));
    FILE *out;
    int rc = 0;

    if (sorted == NULL) {
        fprintf(stderr, "topogate audit: out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < f->n; i++)
        sorted[i] = &f->items[i];
    qsort(sorted, f->n, sizeof(*sorted), cmp_finding);
    if ((out = fopen(path, "w")) == NULL) {
        fprintf(stderr, "topogate audit: --write-baseline %s: %s\n", path,
                strerror(errno));
        free(sorted);
        return -1;
    }
    fputs(baseline_header, out);
    for (size_t i = 0; i < f->n; i++) {
        const struct audit_finding *x = sorted[i];
        fprintf(out, "%s %s ", x->id, audit_rule_name(x->rule));
        put_line(out, x->path);
        fputc(' ', out);
        put_line(out, x->message);
        fputc('\n', out);
    }
    if (ferror(out) | (fclose(out) != 0)) {
        fprintf(stderr, "topogate audit: --write-baseline %s: %s\n", path,
                strerror(errno));
        rc = -1;
    }
    free(sorted);
    return rc;
}
