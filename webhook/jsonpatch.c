/* jsonpatch.c - see jsonpatch.h. */
#include "jsonpatch.h"

#include <stdlib.h>

#include "webhook/base64.h"

/*
 * Each op is printed where it lies: the value straight from the decision's
 * tree, with no copy into a patch tree first.
 */
void
jsonpatch_print(struct jsonout *o, const struct op *ops, size_t n)
{
    jsonout_lit(o, "[");
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            jsonout_lit(o, ",");
        if (ops[i].kind == OP_REPLACE)
            jsonout_lit(o, "{\"op\":\"replace\",\"path\":");
        else
            jsonout_lit(o, "{\"op\":\"add\",\"path\":");
        jsonout_string(o, ops[i].path);
        jsonout_lit(o, ",\"value\":");
        jsonout_value(o, ops[i].value);
        jsonout_lit(o, "}");
    }
    jsonout_lit(o, "]");
}

char *
jsonpatch_write(const struct op *ops, size_t n)
{
    struct jsonout o = {0};

    jsonpatch_print(&o, ops, n);
    return jsonout_take(&o, NULL);
}

char *
jsonpatch_base64(const char *bytes, size_t len)
{
    struct jsonout o = {0};

    base64_put(&o, bytes, len);
    return jsonout_take(&o, NULL);
}
