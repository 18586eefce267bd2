/* policyfile.c - see policyfile.h. */
#include "lib/policyfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/file.h"

struct snapshot *
policyfile_load(const char *path, const struct snapshot_opts *opts, char *err,
                size_t err_len)
{
    struct load_error le;
    struct snapshot *s;
    size_t len;
    char *bytes;

    if (path == NULL) {
        path = "embedded policy";
        s = snapshot_parse_embedded(opts, &le);
    } else {
        if ((bytes = file_read(path, FILE_MAX, &len)) == NULL) {
            snprintf(err, err_len, "%s: %s", path,
                     errno == EFBIG ? "larger than 16 MiB" : strerror(errno));
            return NULL;
        }
        s = snapshot_parse(bytes, len, path, opts, &le);
        free(bytes);
    }
    if (s == NULL)
        snprintf(err, err_len, "%s:%d:%d: %s", path, le.line, le.column,
                 le.message);
    return s;
}
