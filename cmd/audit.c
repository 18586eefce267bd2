/*
 * audit.c - `topogate audit --review -`: one AdmissionReview on stdin, the
 * response on stdout, through review_respond() exactly as `serve` does.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "policy/snapshot.h"
#include "webhook/review.h"

/* Exit statuses: a response was written, usage, unreadable input. */
enum { AUDIT_OK = 0, AUDIT_USAGE = 2 };

static int
review_stdin(const struct snapshot *s)
{
    struct review_result r;
    size_t len;
    char *body = cmd_read_stream(stdin, &len);
    int status;

    if (body == NULL) {
        fprintf(stderr, "topogate: stdin: %s\n", strerror(errno));
        return AUDIT_USAGE;
    }
    if (review_respond(s, body, len, &r) < 0) {
        fprintf(stderr, "topogate: out of memory\n");
        free(body);
        return AUDIT_USAGE;
    }
    fwrite(r.body, 1, r.body_len, stdout);
    status = r.http_status == 200 ? AUDIT_OK : AUDIT_USAGE;
    review_result_free(&r);
    free(body);
    return status;
}

int
cmd_audit(int argc, char **argv)
{
    static const struct option options[] = {
        {"review", required_argument, NULL, 'r'},
        {"policy", required_argument, NULL, 'p'},
        {"mode", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *review = NULL, *policy = NULL, *mode = NULL;
    struct snapshot *s;
    int c, status;

    optind = 1;
    while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (c) {
        case 'r':
            review = optarg;
            break;
        case 'p':
            policy = optarg;
            break;
        case 'm':
            mode = optarg;
            break;
        case 'h':
            puts("usage: topogate audit --review - [--policy FILE] "
                 "[--mode enforce|warn|audit]");
            return AUDIT_OK;
        default:
            return AUDIT_USAGE;
        }
    }
    if (review == NULL || strcmp(review, "-") != 0 || optind != argc) {
        fprintf(stderr, "usage: topogate audit --review - [--policy FILE] "
                        "[--mode enforce|warn|audit]\n");
        return AUDIT_USAGE;
    }
    if ((s = cmd_load_policy(policy, mode)) == NULL)
        return AUDIT_USAGE;
    status = review_stdin(s);
    snapshot_unref(s);
    return status;
}
