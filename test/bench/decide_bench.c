/*
 * decide_bench.c - the decision alone, in process, for each fixture.
 *
 *   decide_bench [-n N] [-b BATCHES] [-m all|review|decide|parse|read]
 *                FIXTURE...
 *
 * For each fixture it times, on this thread's CPU clock (other processes
 * on a shared machine do not count), the median over BATCHES batches of N
 * calls of:
 *   parse   cJSON_ParseWithLength() + cJSON_Delete() of the request body;
 *   read    topogate's own parse of it, jsonread() into an arena kept
 *           across calls and reset after each, as serve's pool threads
 *           read (only with -m read: the figure to set beside
 *           test/bench/simdjson_peer.cpp);
 *   decide  decide() on the parsed request, with decision_init/free: the
 *           pure engine, no JSON text in or out;
 *   review  review_respond(): parse + decode + decide + encode (JSON Patch,
 *           base64, response text), what `serve` does per review, plus
 *           the arena review_respond() makes for each call (serve keeps
 *           one per thread).
 * and prints one JSON object per fixture. With -m decide (or review) only
 * that loop runs, which is what the harness measures under
 * `valgrind --tool=callgrind --toggle-collect=decide` for an instruction
 * count per review that does not depend on the machine's load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "policy/decide.h"
#include "policy/k8s/pod.h"
#include "policy/table/snapshot.h"
#include "test/bench/bench_time.h"
#include "json/jsonread.h"
#include "webhook/review.h"

enum run { RUN_ALL, RUN_REVIEW, RUN_DECIDE, RUN_PARSE, RUN_READ };

struct fixture {
    const char *path;
    char *body;
    size_t len;
};

static int
read_fixture(const char *path, struct fixture *f)
{
    FILE *fp = fopen(path, "rb");
    long size;

    f->path = path;
    if (fp == NULL || fseek(fp, 0, SEEK_END) != 0 || (size = ftell(fp)) < 0 ||
        fseek(fp, 0, SEEK_SET) != 0) {
        if (fp != NULL)
            fclose(fp);
        return -1;
    }
    f->len = (size_t)size;
    f->body = malloc(f->len + 1);
    if (f->body == NULL || fread(f->body, 1, f->len, fp) != f->len) {
        fclose(fp);
        return -1;
    }
    f->body[f->len] = '\0';
    fclose(fp);
    return 0;
}

/*
 * The request fields decide() reads, without review.c's envelope checks:
 * the fixtures are well-formed reviews (review_respond() checks that).
 */
static int
admission_of(const cJSON *root, struct admission *req)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "request");
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "kind");
    const char *ns = json_string(r, "namespace");

    memset(req, 0, sizeof(*req));
    req->uid = json_string(r, "uid");
    req->kind = json_string(k, "kind");
    req->group = json_string(k, "group");
    req->operation = json_string(r, "operation");
    req->namespace = ns != NULL ? ns : "";
    req->dry_run = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "dryRun"));
    req->object = cJSON_GetObjectItemCaseSensitive(r, "object");
    req->old_object = cJSON_GetObjectItemCaseSensitive(r, "oldObject");
    return req->uid && req->kind && req->group && req->operation ? 0 : -1;
}

/* Keeps the compiler from dropping a loop whose result is unused. */
static volatile size_t sink;

static int
loop_parse(const struct fixture *f, long n)
{
    for (long i = 0; i < n; i++) {
        cJSON *root = cJSON_ParseWithLength(f->body, f->len);
        if (root == NULL)
            return -1;
        sink += (size_t)root->type;
        cJSON_Delete(root);
    }
    return 0;
}

/* As a review's body is read: into an arena kept across calls, dropped
 * at once by its reset. */
static int
loop_read(const struct fixture *f, long n)
{
    struct jsonarena *arena = jsonarena_new();
    char msg[256];
    int rc = 0;

    if (arena == NULL)
        return -1;
    for (long i = 0; i < n && rc == 0; i++) {
        const cJSON *root;

        if (jsonread(arena, f->body, f->len, &root, msg, sizeof(msg)) !=
            JSONREAD_OK)
            rc = -1;
        else
            sink += (size_t)root->type;
        jsonarena_reset(arena);
    }
    jsonarena_free(arena);
    return rc;
}

static int
loop_decide(const struct snapshot *s, const struct admission *req, long n)
{
    for (long i = 0; i < n; i++) {
        struct decision d;
        int rc;

        decision_init(&d);
        rc = decide(s, req, &d);
        sink += d.n_ops;
        decision_free(&d);
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int
loop_review(const struct snapshot *s, const struct fixture *f, long n)
{
    for (long i = 0; i < n; i++) {
        struct review_result r;

        if (review_respond(s, NULL, f->body, f->len, &r) < 0 ||
            r.http_status != 200) {
            review_result_free(&r);
            return -1;
        }
        sink += r.body_len;
        review_result_free(&r);
    }
    return 0;
}

/* Median ns per call over batches; a negative value on failure. */
static double
measure(enum run what, const struct snapshot *s, const struct fixture *f,
        const struct admission *req, long n, int batches)
{
    double t[64];
    int rc = 0;

    if (batches > 64)
        batches = 64;
    for (int b = 0; b < batches; b++) {
        double t0 = bench_cpu_ns();

        if (what == RUN_PARSE)
            rc = loop_parse(f, n);
        else if (what == RUN_READ)
            rc = loop_read(f, n);
        else if (what == RUN_DECIDE)
            rc = loop_decide(s, req, n);
        else
            rc = loop_review(s, f, n);
        if (rc < 0)
            return -1;
        t[b] = (bench_cpu_ns() - t0) / (double)n;
    }
    bench_sort_ns(t, (size_t)batches);
    return t[batches / 2];
}

/* Enough calls for a batch of about 20 ms, judged from a first call. */
static long
calls_per_batch(const struct snapshot *s, const struct fixture *f)
{
    double t0 = bench_cpu_ns(), one;

    if (loop_review(s, f, 3) < 0)
        return -1;
    one = (bench_cpu_ns() - t0) / 3;
    return one > 0 ? (long)(20e6 / one) + 1 : 1000;
}

static int
bench_fixture(const struct snapshot *s, const struct fixture *f, enum run m,
              long n, int batches)
{
    struct admission req;
    cJSON *root = cJSON_ParseWithLength(f->body, f->len);
    double parse = 0, dec = 0, rev = 0, read = 0;
    int rc = -1;

    if (root == NULL || admission_of(root, &req) < 0) {
        fprintf(stderr, "decide_bench: %s: not a review\n", f->path);
        goto out;
    }
    if (n <= 0 && (n = calls_per_batch(s, f)) < 0)
        goto out;
    if ((m == RUN_ALL || m == RUN_PARSE) &&
        (parse = measure(RUN_PARSE, s, f, &req, n, batches)) < 0)
        goto out;
    if ((m == RUN_ALL || m == RUN_DECIDE) &&
        (dec = measure(RUN_DECIDE, s, f, &req, n, batches)) < 0)
        goto out;
    if (m == RUN_READ && (read = measure(RUN_READ, s, f, &req, n, batches)) < 0)
        goto out;
    if ((m == RUN_ALL || m == RUN_REVIEW) &&
        (rev = measure(RUN_REVIEW, s, f, &req, n, batches)) < 0)
        goto out;
    printf("{\"fixture\":\"%s\",\"bytes\":%zu,\"calls_per_batch\":%ld,"
           "\"batches\":%d,\"parse_ns\":%.0f,\"decide_ns\":%.0f,"
           "\"review_ns\":%.0f,\"read_ns\":%.0f}\n",
           f->path, f->len, n, batches, parse, dec, rev, read);
    rc = 0;
out:
    if (rc < 0)
        fprintf(stderr, "decide_bench: %s: failed\n", f->path);
    cJSON_Delete(root);
    return rc;
}

static void
usage(void)
{
    fprintf(stderr, "usage: decide_bench [-n calls] [-b batches] "
                    "[-m all|review|decide|parse|read] FIXTURE...\n");
    exit(2);
}

int
main(int argc, char **argv)
{
    struct load_error err;
    struct snapshot *s;
    enum run m = RUN_ALL;
    long n = 0;
    int batches = 15, c, status = 0;

    while ((c = getopt(argc, argv, "n:b:m:")) != -1) {
        switch (c) {
        case 'n':
            n = atol(optarg);
            break;
        case 'b':
            batches = atoi(optarg);
            break;
        case 'm':
            if (strcmp(optarg, "all") == 0)
                m = RUN_ALL;
            else if (strcmp(optarg, "review") == 0)
                m = RUN_REVIEW;
            else if (strcmp(optarg, "decide") == 0)
                m = RUN_DECIDE;
            else if (strcmp(optarg, "parse") == 0)
                m = RUN_PARSE;
            else if (strcmp(optarg, "read") == 0)
                m = RUN_READ;
            else
                usage();
            break;
        default:
            usage();
        }
    }
    if (optind >= argc || batches < 1)
        usage();
    memset(&err, 0, sizeof(err));
    if ((s = snapshot_parse_embedded(NULL, &err)) == NULL) {
        fprintf(stderr, "decide_bench: embedded policy: %s\n", err.message);
        return 1;
    }
    for (int i = optind; i < argc; i++) {
        struct fixture f = {0};

        if (read_fixture(argv[i], &f) < 0) {
            fprintf(stderr, "decide_bench: %s: %s\n", argv[i], strerror(errno));
            status = 1;
        } else if (bench_fixture(s, &f, m, n, batches) < 0) {
            status = 1;
        }
        free(f.body);
    }
    snapshot_unref(s);
    return status;
}
