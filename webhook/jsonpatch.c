/* jsonpatch.c - see jsonpatch.h. */
#include "jsonpatch.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

char *
jsonpatch_write(const struct op *ops, size_t n)
{
    cJSON *patch = cJSON_CreateArray();
    char *text = NULL;

    if (patch == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        cJSON *op = cJSON_CreateObject();
        cJSON *value = cJSON_Duplicate(ops[i].value, 1);
        if (!cJSON_AddItemToArray(patch, op) ||
            !cJSON_AddStringToObject(
                op, "op", ops[i].kind == OP_REPLACE ? "replace" : "add") ||
            !cJSON_AddStringToObject(op, "path", ops[i].path) ||
            !cJSON_AddItemToObject(op, "value", value)) {
            cJSON_Delete(value);
            goto out;
        }
    }
    text = cJSON_PrintUnformatted(patch);
out:
    cJSON_Delete(patch);
    return text;
}

char *
jsonpatch_base64(const char *bytes, size_t len)
{
    /* 4 output bytes per 3 input bytes, rounded up, plus the NUL. */
    char *out = malloc((len + 2) / 3 * 4 + 1);

    if (out == NULL || len > (size_t)1 << 30) {
        free(out);
        return NULL;
    }
    EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)bytes,
                    (int)len);
    return out;
}
