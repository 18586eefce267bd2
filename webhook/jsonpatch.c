/* jsonpatch.c - see jsonpatch.h. */
#include "webhook/jsonpatch.h"

#include <stdlib.h>

#include "base/base64.h"

void
jsonpatch_print(struct jsonout *o, const struct op *ops, size_t n)
{
    jsonout_lit(o, "[");
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            jsonout_lit(o, ",");
        decision_print_op(o, &ops[i]);
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
