/*
 * A decision's patch ops: the JSON Pointer of each (RFC 6901 escapes in
 * the key, the prefix as given), in the order added, however many.
 */
#include <stdio.h>

#include "policy/decision.h"
#include "test/unit/check.h"

static void
test_paths(void)
{
    struct decision d;

    decision_init(&d);
    CHECK_INT(decision_add_at(&d, cJSON_CreateString("4"),
                              "/spec/containers/0/resources/limits",
                              "vpc.amazonaws.com/efa"),
              0);
    CHECK_INT(decision_add_at(&d, cJSON_CreateTrue(), "/spec/a~b", "x~/y//~"),
              0);
    CHECK_INT(decision_add_at(&d, cJSON_CreateTrue(), "/spec/hostIPC", NULL),
              0);
    CHECK_INT(decision_add_at(&d, cJSON_CreateTrue(), "/spec/env", "-"), 0);
    CHECK_INT(decision_add_at(&d, cJSON_CreateTrue(), "", ""), 0);
    CHECK_INT(d.n_ops, 5);
    CHECK_STR(d.ops[0].path,
              "/spec/containers/0/resources/limits/vpc.amazonaws.com~1efa");
    CHECK_STR(d.ops[0].value->valuestring, "4");
    /* The prefix is a pointer already: only the key is escaped. */
    CHECK_STR(d.ops[1].path, "/spec/a~b/x~0~1y~1~1~0");
    CHECK_STR(d.ops[2].path, "/spec/hostIPC");
    CHECK_STR(d.ops[3].path, "/spec/env/-");
    CHECK_STR(d.ops[4].path, "/");
    CHECK(d.ops[0].kind == OP_ADD && d.ops[4].kind == OP_ADD);
    /* A value that could not be made: the op is not added. */
    CHECK_INT(decision_add_at(&d, NULL, "/spec", "x"), -1);
    CHECK_INT(d.n_ops, 5);
    decision_free(&d);
}

/* Many ops (the array grows past its first allocation), in order. */
static void
test_many(void)
{
    struct decision d;
    char key[32];

    decision_init(&d);
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        CHECK_INT(decision_add_at(&d, cJSON_CreateNumber(i), "/p", key), 0);
        if (i % 3 == 0)
            CHECK_INT(decision_replace(&d, "/r", cJSON_CreateNumber(i)), 0);
    }
    CHECK_INT(d.n_ops, 1334);
    CHECK_STR(d.ops[0].path, "/p/k0");
    CHECK(d.ops[1].kind == OP_REPLACE);
    CHECK_STR(d.ops[1332].path, "/p/k999");
    CHECK_INT(d.ops[1333].value->valueint, 999);
    decision_free(&d);
    CHECK_INT(d.n_ops, 0);
}

int
main(void)
{
    test_paths();
    test_many();
    CHECK_DONE();
}
