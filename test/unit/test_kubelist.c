/*
 * test_kubelist.c - kube/kubelist.c: a list body cut into its items as
 * it streams in, fed whole and a byte at a time: braces and brackets in
 * strings, escapes, nested arrays, metadata before or after the items,
 * "items": null, and what is refused. kubelist.c needs only base/, so it
 * is compiled in here rather than linked with the client's libcurl.
 */
#include <stdio.h>
#include <string.h>

#include "kube/kubelist.c"
#include "test/unit/check.h"

struct seen {
    char items[8][256];
    int n;
};

static int
each(void *ctx, const char *item, size_t len)
{
    struct seen *s = ctx;

    if (s->n < 8)
        snprintf(s->items[s->n], sizeof(s->items[0]), "%.*s", (int)len, item);
    s->n++;
    return 0;
}

/* Feeds text whole (step 0) or step bytes at a time. */
static enum kubelist_result
feed(const char *text, size_t step, struct seen *s, struct kubelist *l)
{
    size_t n = strlen(text);
    enum kubelist_result rc = KUBELIST_OK;

    memset(s, 0, sizeof(*s));
    kubelist_init(l, 200, 200);
    for (size_t at = 0; at < n && rc == KUBELIST_OK; at += step ? step : n)
        rc = kubelist_feed(l, text + at, step && n - at > step ? step : n - at,
                           each, s);
    return rc;
}

static void
good(const char *text, int n_items, const char *first, const char *rest)
{
    static const size_t steps[] = {0, 1, 2, 7};

    for (size_t i = 0; i < sizeof(steps) / sizeof(*steps); i++) {
        struct kubelist l;
        struct seen s;
        size_t len;

        CHECK_INT(feed(text, steps[i], &s, &l), KUBELIST_OK);
        CHECK_INT(s.n, n_items);
        if (first)
            CHECK_STR(s.items[0], first);
        CHECK(kubelist_done(&l));
        CHECK_STR(kubelist_rest(&l, &len), rest);
        kubelist_free(&l);
    }
}

static void
bad(const char *text, enum kubelist_result want)
{
    struct kubelist l;
    struct seen s;

    CHECK_INT(feed(text, 1, &s, &l), want);
    kubelist_free(&l);
}

int
main(void)
{
    good("{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"7\"},"
         "\"items\":[{\"a\":\"}{][\\\"\\\\\"},{\"b\":[1,[2],{\"c\":[]}]}]}",
         2, "{\"a\":\"}{][\\\"\\\\\"}",
         "{\"kind\":\"NodeList\",\"metadata\":{\"resourceVersion\":\"7\"},"
         "\"items\":[]}");
    /* Metadata after the items; space everywhere JSON allows it. */
    good(" { \"items\" : [ {\"x\":1} , {\"y\":2} ] ,\n \"metadata\" : "
         "{\"continue\":\"abc\"} } \n",
         2, "{\"x\":1}",
         "{ \"items\" : [] ,\n \"metadata\" : {\"continue\":\"abc\"} }");
    /* A member named items inside metadata is not the list's. */
    good("{\"metadata\":{\"items\":[{\"no\":1}]},\"items\":[]}", 0, NULL,
         "{\"metadata\":{\"items\":[{\"no\":1}]},\"items\":[]}");
    good("{\"items\":null,\"metadata\":{}}", 0, NULL,
         "{\"items\":null,\"metadata\":{}}");
    /* A key that only begins like items. */
    good("{\"itemsX\":[{\"q\":1}]}", 0, NULL, "{\"itemsX\":[{\"q\":1}]}");
    bad("[{\"a\":1}]", KUBELIST_NOT_JSON);
    bad("{\"items\":[1,2]}", KUBELIST_NOT_JSON);
    bad("{\"items\":[]} {}", KUBELIST_NOT_JSON);
    /* One item past its cap (200 bytes here), the envelope past its. */
    {
        char big[400];
        snprintf(big, sizeof(big), "{\"items\":[{\"s\":\"%0300d\"}]}", 0);
        bad(big, KUBELIST_TOO_LARGE);
        snprintf(big, sizeof(big), "{\"kind\":\"%0300d\",\"items\":[]}", 0);
        bad(big, KUBELIST_TOO_LARGE);
    }
    /* Not done until the object closes. */
    {
        struct kubelist l;
        struct seen s;

        CHECK_INT(feed("{\"items\":[{\"a\":1}", 0, &s, &l), KUBELIST_OK);
        CHECK_INT(s.n, 1);
        CHECK(!kubelist_done(&l));
        kubelist_reset(&l);
        CHECK(!kubelist_done(&l));
        kubelist_free(&l);
    }
    CHECK_DONE();
}
