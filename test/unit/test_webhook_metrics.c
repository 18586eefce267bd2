/*
 * The metrics: labels only from the policy's table, counters that survive
 * a reload, a cumulative histogram, and label values escaped.
 */
#include <stdlib.h>
#include <string.h>

#include "policy/table/snapshot.h"
#include "test/unit/check.h"
#include "webhook/metrics.h"

/* Whether text has line as one whole line. */
static int
has_line(const char *text, const char *line)
{
    size_t n = strlen(line);

    for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
        if ((p == text || p[-1] == '\n') && p[n] == '\n')
            return 1;
    return 0;
}

#define CHECK_LINE(text, line)                                                 \
    do {                                                                       \
        if (!has_line(text, line)) {                                           \
            fprintf(stderr, "%s:%d: no line '%s' in:\n%s\n", __FILE__,         \
                    __LINE__, line, text);                                     \
            check_failures++;                                                  \
        }                                                                      \
    } while (0)

int
main(void)
{
    struct instance_type first[] = {{.name = "p4d.24xlarge"},
                                    {.name = "g5.xlarge"}};
    struct instance_type second[] = {{.name = "p5.48xlarge"}};
    struct snapshot s = {
        .origin = "/etc/topogate/\"policy\".yaml",
        .digest = 0xabcdef,
        .mode = MODE_WARN,
        .types = first,
        .n_types = 2,
    };
    struct metrics *m = metrics_new();
    char *text;

    CHECK(m != NULL);
    CHECK_INT(metrics_set_policy(m, &s), 0);
    metrics_review(m, true, VERDICT_PATCH, "p4d.24xlarge", 50);
    metrics_review(m, true, VERDICT_PATCH, "p4d.24xlarge", 3000);
    metrics_review(m, true, VERDICT_DENY, "p9.mega", 120);
    metrics_review(m, true, VERDICT_IGNORE, "", 80);
    metrics_review(m, false, VERDICT_ALLOW, "g5.xlarge", 2000000);
    metrics_http(m, 200);
    metrics_http(m, 418);

    /* A reload to another table keeps the old names and adds the new. */
    s.types = second;
    s.n_types = 1;
    s.mode = MODE_ENFORCE;
    CHECK_INT(metrics_set_policy(m, &s), 0);
    metrics_review(m, true, VERDICT_ALLOW, "p5.48xlarge", 100);
    metrics_review(m, true, VERDICT_PATCH, "p4d.24xlarge", 100);

    text = metrics_render(m);
    CHECK(text != NULL);
    if (text == NULL)
        return 1;
    CHECK_LINE(text, "topogate_reviews_total{decision=\"patch\","
                     "instance_type=\"p4d.24xlarge\"} 3");
    CHECK_LINE(text, "topogate_reviews_total{decision=\"deny\","
                     "instance_type=\"unknown\"} 1");
    CHECK_LINE(text, "topogate_reviews_total{decision=\"ignore\","
                     "instance_type=\"none\"} 1");
    CHECK_LINE(text, "topogate_reviews_total{decision=\"error\","
                     "instance_type=\"g5.xlarge\"} 1");
    CHECK_LINE(text, "topogate_reviews_total{decision=\"allow\","
                     "instance_type=\"p5.48xlarge\"} 1");
    CHECK(strstr(text, "p9.mega") == NULL);

    CHECK_LINE(text, "topogate_review_duration_seconds_bucket{le=\"0.0001\"}"
                     " 4");
    CHECK_LINE(text, "topogate_review_duration_seconds_bucket{le=\"0.00025\"}"
                     " 5");
    CHECK_LINE(text, "topogate_review_duration_seconds_bucket{le=\"0.005\"}"
                     " 6");
    CHECK_LINE(text, "topogate_review_duration_seconds_bucket{le=\"1\"} 6");
    CHECK_LINE(text, "topogate_review_duration_seconds_bucket{le=\"+Inf\"} "
                     "7");
    CHECK_LINE(text, "topogate_review_duration_seconds_count 7");
    CHECK_LINE(text, "topogate_review_duration_seconds_sum 2.003450");

    CHECK_LINE(text, "topogate_http_requests_total{code=\"200\"} 1");
    CHECK_LINE(text, "topogate_http_requests_total{code=\"other\"} 1");
    CHECK_LINE(text, "topogate_policy_info{origin=\"/etc/topogate/"
                     "\\\"policy\\\".yaml\",digest=\"0000000000abcdef\","
                     "mode=\"enforce\"} 1");
    CHECK(strstr(text, "topogate_build_info{version=\"") != NULL);
    free(text);
    metrics_free(m);
    metrics_free(NULL);
    CHECK_DONE();
}
