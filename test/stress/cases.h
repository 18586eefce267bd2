/*
 * cases.h - the golden reviews with the exact answer serve must give.
 *
 * Reads DIR/<case>.in.json and DIR/<case>.out.json for every case that
 * runs with the default flags and policy (no .args, no .policy file).
 */
#ifndef STRESS_CASES_H
#define STRESS_CASES_H

#include <stddef.h>

struct fixture {
    char *name;
    char *request; /* the whole HTTP request: headers and body */
    size_t request_len;
    char *answer; /* the expected response body */
    size_t answer_len;
    int status; /* 200, or 400 for a Status body */
};

/*
 * Loads the cases, each body padded with spaces to at least pad bytes
 * (0: none). Returns the count (> 0), or -1 after printing why.
 */
int cases_load(const char *dir, size_t pad, struct fixture **out);

#endif
