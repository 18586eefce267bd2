/*
 * A decision's patch ops: the JSON Pointer of each (RFC 6901 escapes in
 * the key, the prefix as given), in the order added, however many; and
 * the pointer text mutate writes them from, cut to fit as snprintf().
 */
#include <stdio.h>
#include <string.h>

#include "policy/decision.h"
#include "base/pointer.h"
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
    CHECK_STR(d.ops[0].value, "\"4\"");
    CHECK_INT(d.ops[0].value_len, 3);
    /* The prefix is a pointer already: only the key is escaped. */
    CHECK_STR(d.ops[1].path, "/spec/a~b/x~0~1y~1~1~0");
    CHECK_STR(d.ops[2].path, "/spec/hostIPC");
    CHECK_STR(d.ops[3].path, "/spec/env/-");
    CHECK_STR(d.ops[4].path, "/");
    CHECK(d.ops[0].kind == OP_ADD && d.ops[4].kind == OP_ADD);
    /* A value that could not be made: the op is not added. */
    CHECK_INT(decision_add_at(&d, NULL, "/spec", "x"), -1);
    CHECK_INT(d.n_ops, 5);
    /* ... and the next one is. */
    CHECK_INT(decision_add_at(&d, cJSON_CreateFalse(), "/spec", "y"), 0);
    CHECK_STR(d.ops[5].value, "false");
    decision_free(&d);
}

/* Values written as text: the op carries them as they were written. */
static void
test_value_text(void)
{
    struct decision d;
    struct jsonout *v, out = {0};

    decision_init(&d);
    v = decision_value(&d);
    jsonout_lit(v, "{\"name\":");
    jsonout_string(v, "a\"b");
    jsonout_lit(v, "}");
    CHECK_INT(decision_add_value(&d, "/spec/env", "-"), 0);
    jsonout_lit(decision_value(&d), "[1]");
    CHECK_INT(decision_replace_value(&d, "/spec/x~1y"), 0);
    /* Nothing written is no value: no op. */
    decision_value(&d);
    CHECK_INT(decision_add_value(&d, "/spec", "z"), -1);
    CHECK_INT(d.n_ops, 2);
    decision_print_op(&out, &d.ops[0]);
    jsonout_lit(&out, ",");
    decision_print_op(&out, &d.ops[1]);
    CHECK_STR(out.buf, "{\"op\":\"add\",\"path\":\"/spec/env/-\","
                       "\"value\":{\"name\":\"a\\\"b\"}},"
                       "{\"op\":\"replace\",\"path\":\"/spec/x~1y\","
                       "\"value\":[1]}");
    jsonout_free(&out);
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
    CHECK_STR(d.ops[1333].value, "999");
    decision_free(&d);
    CHECK_INT(d.n_ops, 0);
}

/* pointer_index() and pointer_join() write what snprintf() would. */
static void
test_pointer_text(void)
{
    const size_t sizes[] = {1, 2, 5, 17, 18, 19, 22, 64};
    const long indexes[] = {0, 7, 12345, -1, -2147483648L};

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        for (size_t k = 0; k < sizeof(indexes) / sizeof(indexes[0]); k++) {
            char got[64], want[64];

            memset(got, 'x', sizeof(got));
            pointer_index(got, sizes[i], "/spec/containers", indexes[k],
                          "/env");
            snprintf(want, sizes[i], "/spec/containers/%ld/env", indexes[k]);
            CHECK_STR(got, want);
            memset(got, 'x', sizeof(got));
            pointer_index(got, sizes[i], "/spec/containers", indexes[k], NULL);
            snprintf(want, sizes[i], "/spec/containers/%ld", indexes[k]);
            CHECK_STR(got, want);
        }
        {
            char got[64], want[64];

            memset(got, 'x', sizeof(got));
            pointer_join(got, sizes[i], "/spec/containers/0", "/env");
            snprintf(want, sizes[i], "%s%s", "/spec/containers/0", "/env");
            CHECK_STR(got, want);
        }
    }
}

int
main(void)
{
    test_paths();
    test_value_text();
    test_many();
    test_pointer_text();
    CHECK_DONE();
}
