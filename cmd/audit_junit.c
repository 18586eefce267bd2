/*
 * audit_junit.c - the audit as JUnit XML, in the shape of Apache Ant's
 * junitreport (the XSD of windyroad/JUnit-Schema, JUnit.xsd), the test
 * report CI systems read (GitLab: docs.gitlab.com "Unit test reports",
 * classname shown as the suite): <testsuites>, one
 * <testsuite> per input file, one <testcase> per workload or unreadable
 * document. A case fails when a finding of it fails at --fail-on and is
 * not in the baseline; the other findings are listed in the suite's
 * <system-out>, so that none is dropped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/audit.h"
#include "base/utf8.h"

/* XML 1.0 text or attribute value: markup escaped, and what it cannot
 * carry at all (control characters, bytes that are not UTF-8) replaced. */
static void
xml_put(FILE *out, const char *s)
{
    size_t left = strlen(s);

    for (const unsigned char *p = (const unsigned char *)s; *p; p++, left--) {
        size_t n;
        if (*p >= 0x80) {
            if ((n = utf8_length(p, left)) == 0) {
                fputc('?', out);
            } else {
                fwrite(p, 1, n, out);
                p += n - 1;
                left -= n - 1;
            }
            continue;
        }
        switch (*p) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\n':
            fputs("&#10;", out);
            break;
        case '\t':
            fputs("&#9;", out);
            break;
        default:
            fputc(*p < 0x20 ? '?' : *p, out);
        }
    }
}

static const char *
file_name(const struct audit_input *in, size_t i)
{
    return strcmp(in->files[i], "-") == 0 ? "<stdin>" : in->files[i];
}

/*
 * The XSD requires a timestamp (no zone: it is UTC here) and a host.
 * SOURCE_DATE_EPOCH (reproducible-builds.org/specs/source-date-epoch)
 * fixes the time, for reports that must not change from run to run.
 */
static void
timestamp(char *buf, size_t len)
{
    const char *epoch = getenv("SOURCE_DATE_EPOCH");
    time_t t = time(NULL);
    struct tm tm;
    char *end;

    if (epoch && *epoch) {
        long long v = strtoll(epoch, &end, 10);
        if (*end == '\0' && v >= 0)
            t = (time_t)v;
    }
    if (gmtime_r(&t, &tm) == NULL ||
        strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        snprintf(buf, len, "1970-01-01T00:00:00");
}

static void
hostname(char *buf, size_t len)
{
    /* The XSD: "'localhost' should be used if the hostname cannot be
     * determined". */
    if (gethostname(buf, len) != 0 || buf[0] == '\0' ||
        strpbrk(buf, " \t\n") != NULL)
        snprintf(buf, len, "localhost");
    buf[len - 1] = '\0';
}

static bool
fails(const struct audit_finding *f, enum audit_outcome fail_on)
{
    return !f->known && audit_finding_fails(f, fail_on);
}

/* The case's name: the workload, or where the unreadable document is. */
static void
case_name(FILE *out, const struct audit_doc *d)
{
    const struct expansion *e = &d->item.e;

    if (d->error) {
        fprintf(out, "unreadable document at line %d", d->line);
        return;
    }
    xml_put(out, e->kind);
    fputc(' ', out);
    xml_put(out, e->namespace);
    if (e->namespace[0])
        fputc('/', out);
    xml_put(out, e->name[0] ? e->name : "(no name)");
}

/* A finding as a line: "id rule line N: message". */
static void
finding_line(FILE *out, const struct audit_finding *f, const char *tail)
{
    fprintf(out, "%s %s line %d: ", f->id, audit_rule_name(f->rule),
            f->line);
    xml_put(out, f->message);
    fputs(tail, out);
    fputc('\n', out);
}

static void
write_case(FILE *out, const struct audit_input *in, size_t doc,
           const struct audit_findings *f, enum audit_outcome fail_on)
{
    const struct audit_doc *d = &in->docs[doc];
    const struct audit_finding *first = NULL;

    for (size_t i = 0; i < f->n && first == NULL; i++)
        if (f->items[i].doc == doc && fails(&f->items[i], fail_on))
            first = &f->items[i];
    fputs("    <testcase name=\"", out);
    case_name(out, d);
    fputs("\" classname=\"", out);
    xml_put(out, file_name(in, d->file));
    fputs("\" time=\"0\"", out);
    if (first) {
        fputs(">\n      <failure message=\"", out);
        xml_put(out, first->message);
        fprintf(out, "\" type=\"%s\">\n", audit_rule_name(first->rule));
        for (size_t i = 0; i < f->n; i++)
            if (f->items[i].doc == doc && fails(&f->items[i], fail_on))
                finding_line(out, &f->items[i], "");
        fputs("</failure>\n    </testcase>\n", out);
    } else if (d->error || d->item.outcome == OUTCOME_SKIPPED) {
        /* Not judged: unreadable below the gate, or not a workload kind. */
        fputs(">\n      <skipped message=\"", out);
        xml_put(out, d->error ? d->error : d->item.e.note ? d->item.e.note
                                                           : "skipped");
        fputs("\"/>\n    </testcase>\n", out);
    } else {
        fputs("/>\n", out);
    }
}

static void
write_suite(FILE *out, const struct audit_input *in, size_t file,
            const struct audit_findings *f, const char *policy,
            enum audit_outcome fail_on, const char *when, const char *host)
{
    size_t tests = 0, failures = 0, skipped = 0;

    for (size_t i = 0; i < in->n_docs; i++) {
        const struct audit_doc *d = &in->docs[i];
        bool failed = false;
        if (d->file != file)
            continue;
        tests++;
        for (size_t j = 0; j < f->n && !failed; j++)
            failed = f->items[j].doc == i && fails(&f->items[j], fail_on);
        if (failed)
            failures++;
        else if (d->error || d->item.outcome == OUTCOME_SKIPPED)
            skipped++;
    }
    fputs("  <testsuite name=\"", out);
    xml_put(out, file_name(in, file));
    fputs("\" package=\"", out);
    xml_put(out, file_name(in, file));
    fprintf(out,
            "\" id=\"%zu\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "skipped=\"%zu\" time=\"0\" timestamp=\"%s\" hostname=\"",
            file, tests, failures, skipped, when);
    xml_put(out, host);
    fputs("\">\n    <properties>\n      <property name=\"policy\" "
          "value=\"",
          out);
    xml_put(out, policy);
    fprintf(out,
            "\"/>\n      <property name=\"fail-on\" value=\"%s\"/>\n"
            "    </properties>\n",
            fail_on == OUTCOME_SKIPPED ? "never" : outcome_name(fail_on));
    for (size_t i = 0; i < in->n_docs; i++)
        if (in->docs[i].file == file)
            write_case(out, in, i, f, fail_on);
    /* The findings that do not fail: below --fail-on, or known. */
    fputs("    <system-out>\n", out);
    for (size_t j = 0; j < f->n; j++)
        if (in->docs[f->items[j].doc].file == file &&
            !fails(&f->items[j], fail_on))
            finding_line(out, &f->items[j],
                         f->items[j].known ? " (in the baseline)" : "");
    fputs("</system-out>\n    <system-err></system-err>\n  </testsuite>\n",
          out);
}

int
audit_write_junit(FILE *out, const struct audit_input *in,
                  const struct audit_findings *f, const char *policy,
                  enum audit_outcome fail_on)
{
    char when[32], host[256];

    timestamp(when, sizeof(when));
    hostname(host, sizeof(host));
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n", out);
    for (size_t file = 0; file < in->n_files; file++)
        write_suite(out, in, file, f, policy, fail_on, when, host);
    fputs("</testsuites>\n", out);
    return ferror(out) ? -1 : 0;
}
