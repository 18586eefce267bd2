/*
 * policy_load.h - a policy file's text loaded as a test writes it, and
 * the loader's error checked at its line and column. Shared by the
 * snapshot's tests and the nodeLabels section's.
 */
#ifndef TOPOGATE_TEST_POLICY_LOAD_H
#define TOPOGATE_TEST_POLICY_LOAD_H

#include <string.h>

#include "policy/table/snapshot.h"
#include "test/unit/check.h"

/* Loads text; on failure returns NULL with err filled. */
static struct snapshot *
load(const char *text, struct load_error *err)
{
    return snapshot_parse(text, strlen(text), "test.yaml", NULL, err);
}

static void
expect_error(const char *text, int line, int column, const char *message)
{
    struct load_error err;
    struct snapshot *s = load(text, &err);

    CHECK(s == NULL);
    snapshot_unref(s);
    CHECK_INT(err.line, line);
    CHECK_INT(err.column, column);
    CHECK_STR(err.message, message);
}

#endif
