/*
 * audit_input.c - files, directories and stdin into documents. Each YAML
 * document is parsed on its own, so that one broken document (a Jinja
 * line, a placeholder) is reported and the others are still audited.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/audit.h"
#include "cmd/cmd.h"
#include "policy/kinds/expand.h"
#include "policy/k8s/pod.h"
#include "base/strbuf.h"
#include "policy/k8s/yamljson.h"
#include "policy/k8s/yamltypes.h"
#include "lib/file.h"

/* Directories nest no deeper than this (a symlink loop ends here). */
#define WALK_DEPTH 32

static int
add_file(struct audit_input *in, const char *path)
{
    char **files = realloc(in->files, (in->n_files + 1) * sizeof(*files));

    if (files == NULL)
        return -2;
    in->files = files;
    if ((in->files[in->n_files] = strdup(path)) == NULL)
        return -2;
    in->n_files++;
    return 0;
}

static struct audit_doc *
new_doc(struct audit_input *in, int line)
{
    struct audit_doc *d =
        realloc(in->docs, (in->n_docs + 1) * sizeof(*in->docs));

    if (d == NULL)
        return NULL;
    in->docs = d;
    d = &in->docs[in->n_docs++];
    memset(d, 0, sizeof(*d));
    d->file = in->n_files - 1;
    d->line = line;
    return d;
}

static int __attribute__((format(printf, 3, 4)))
add_error(struct audit_input *in, int line, const char *fmt, ...)
{
    struct audit_doc *d = new_doc(in, line);
    va_list ap;
    int n;

    if (d == NULL)
        return -2;
    va_start(ap, fmt);
    n = vasprintf(&d->error, fmt, ap);
    va_end(ap);
    if (n < 0) {
        d->error = NULL;
        in->n_docs--;
        return -2;
    }
    return 0;
}

static int __attribute__((format(printf, 4, 5)))
set_error(struct audit_doc *d, int line, bool keep_object, const char *fmt,
          ...);

/*
 * A value the apiserver refuses for its type once kubectl has read the
 * YAML (a plain yes where a string goes): the object would never be
 * created, so there is no decision to report, only the mistake.
 */
static int
refuse_types(struct audit_doc *d, const struct ynode *node, int offset)
{
    struct yaml_refused r;

    if (!yaml_find_refused(node, &r))
        return 0;
    d->refused = true;
    return set_error(d, offset + r.node->line, false, "%s", r.message);
}

/*
 * Takes obj. Lists (kubectl get -o yaml) and AdmissionReviews unwrap.
 * node, when the object came from YAML, gives each list item its line.
 */
static int
add_object(struct audit_input *in, int line, cJSON *obj,
           const struct ynode *node, int offset)
{
    const char *kind = json_string(obj, "kind");
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(obj, "items");
    size_t klen = kind ? strlen(kind) : 0;
    struct audit_doc *d;

    if (cJSON_IsNull(obj)) { /* an empty document */
        cJSON_Delete(obj);
        return 0;
    }
    if (!cJSON_IsObject(obj)) {
        cJSON_Delete(obj);
        return add_error(in, line, "not a Kubernetes object (a %s)",
                         cJSON_IsArray(obj) ? "list" : "scalar");
    }
    if (klen >= 4 && strcmp(kind + klen - 4, "List") == 0 &&
        cJSON_IsArray(items)) {
        const struct ynode *ys = ynode_get(node, "items");
        cJSON *item;
        for (size_t i = 0;
             (item = cJSON_DetachItemFromArray(
                  cJSON_GetObjectItemCaseSensitive(obj, "items"), 0)) != NULL;
             i++) {
            const struct ynode *y =
                ys && ys->kind == YNODE_SEQ && i < ys->n_items ? ys->items[i]
                                                               : NULL;
            int rc =
                add_object(in, y ? offset + y->line : line, item, y, offset);
            if (rc < 0) {
                cJSON_Delete(obj);
                return rc;
            }
        }
        cJSON_Delete(obj);
        return 0;
    }
    if (kind && strcmp(kind, "AdmissionReview") == 0) {
        cJSON *req = cJSON_GetObjectItemCaseSensitive(obj, "request");
        cJSON *o = cJSON_DetachItemFromObjectCaseSensitive(req, "object");
        cJSON_Delete(obj);
        if (o == NULL)
            return add_error(in, line,
                             "an AdmissionReview without "
                             "request.object");
        return add_object(in, line, o, NULL, 0);
    }
    if ((d = new_doc(in, line)) == NULL) {
        cJSON_Delete(obj);
        return -2;
    }
    d->object = obj;
    /* An object kubectl would send: not a chart's values.yaml. */
    return node != NULL && kind != NULL && json_string(obj, "apiVersion")
               ? refuse_types(d, node, offset)
               : 0;
}

static int
line_at(const char *buf, size_t offset)
{
    int line = 1;

    for (size_t i = 0; i < offset; i++)
        line += buf[i] == '\n';
    return line;
}

static int
read_json(struct audit_input *in, const char *buf, size_t len)
{
    const char *end = NULL;
    cJSON *obj = cJSON_ParseWithLengthOpts(buf, len, &end, false);

    if (obj == NULL)
        return add_error(in, line_at(buf, end ? (size_t)(end - buf) : 0),
                         "invalid JSON");
    return add_object(in, 1, obj, NULL, 0);
}

static int __attribute__((format(printf, 4, 5)))
set_error(struct audit_doc *d, int line, bool keep_object, const char *fmt,
          ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&d->error, fmt, ap);
    va_end(ap);
    if (n < 0) {
        d->error = NULL;
        return -2;
    }
    d->line = line;
    if (!keep_object) {
        cJSON_Delete(d->object);
        d->object = NULL;
    }
    return 0;
}

#define UNRENDERED_MESSAGE                                                   \
    "%s is '%.60s', an unrendered template placeholder: render the "        \
    "template first"

/*
 * A placeholder that no audit can look past: the kind, or a runtime
 * (TrainJobs are joined with it before anything is judged).
 */
static bool
blocks_reading(const cJSON *obj, const struct audit_unrendered *u)
{
    return strcmp(u->path, "apiVersion") == 0 ||
           strcmp(u->path, "kind") == 0 || expand_is_runtime(obj);
}

/*
 * Placeholders in the fields the decision reads are taken out of the
 * object and kept on its document; whether they change its decision is
 * judged after the audit (audit_input_judge_unrendered()).
 */
static int
keep_unrendered(struct audit_input *in, size_t before, const cJSON *obj,
                const struct yaml_placeholder *ph, size_t n, int offset)
{
    struct audit_doc *d;

    /* A list's items, an AdmissionReview: the paths name the wrapper. */
    if (in->n_docs != before + 1 || (d = &in->docs[before])->object == NULL ||
        d->object != obj)
        return -1;
    if ((d->unrendered = calloc(n, sizeof(*d->unrendered))) == NULL)
        return -2;
    for (size_t i = 0; i < n; i++) {
        struct audit_unrendered *u = &d->unrendered[d->n_unrendered++];
        snprintf(u->path, sizeof(u->path), "%s",
                 ph[i].path[0] ? ph[i].path : "a key");
        snprintf(u->value, sizeof(u->value), "%s", ph[i].node->scalar);
        u->line = offset + ph[i].node->line;
        u->key = ph[i].key;
    }
    for (size_t i = 0; i < n; i++)
        if (blocks_reading(d->object, &d->unrendered[i]))
            return set_error(d, d->unrendered[i].line, false,
                             UNRENDERED_MESSAGE, d->unrendered[i].path,
                             d->unrendered[i].value);
    return 0;
}

static int
read_yaml_doc(struct audit_input *in, const struct ynode *doc, int offset)
{
    struct load_error err;
    struct yaml_placeholder ph[AUDIT_MAX_UNRENDERED];
    size_t n, before = in->n_docs;
    cJSON *obj = yaml_to_json(doc, &err);
    int rc;

    if (obj == NULL)
        return add_error(in, offset + err.line, "%s", err.message);
    /* After yaml_to_json(): it bounds what aliases expand to. */
    n = yaml_unset_placeholders(doc, obj, ph, AUDIT_MAX_UNRENDERED);
    if (n > AUDIT_MAX_UNRENDERED) {
        cJSON_Delete(obj);
        return add_error(in, offset + ph[0].node->line, UNRENDERED_MESSAGE,
                         ph[0].path[0] ? ph[0].path : "a key",
                         ph[0].node->scalar);
    }
    if ((rc = add_object(in, offset + doc->line, obj, doc, offset)) < 0 ||
        n == 0)
        return rc;
    if ((rc = keep_unrendered(in, before, obj, ph, n, offset)) != -1)
        return rc;
    /* Unwrapped: its documents cannot say which placeholder is theirs. */
    while (in->n_docs > before) {
        struct audit_doc *d = &in->docs[--in->n_docs];
        cJSON_Delete(d->object);
        free(d->error);
    }
    return add_error(in, offset + ph[0].node->line, UNRENDERED_MESSAGE,
                     ph[0].path[0] ? ph[0].path : "a key", ph[0].node->scalar);
}

/* One "---"-separated chunk; first_line counts from 1. */
static int
read_yaml_chunk(struct audit_input *in, const char *chunk, size_t len,
                int first_line)
{
    struct load_error err;
    struct ytree *t = ytree_parse(chunk, len, &err);
    int rc = 0;

    if (t == NULL)
        return add_error(in, first_line - 1 + err.line, "invalid YAML: %s",
                         err.message);
    for (size_t i = 0; i < t->n_docs && rc == 0; i++)
        rc = read_yaml_doc(in, t->docs[i], first_line - 1);
    ytree_free(t);
    return rc;
}

static bool
is_separator(const char *line, const char *end)
{
    return end - line >= 3 && memcmp(line, "---", 3) == 0 &&
           (end - line == 3 || isspace((unsigned char)line[3]));
}

static int
read_yaml(struct audit_input *in, const char *buf, size_t len)
{
    const char *end = buf + len, *chunk = buf, *p = buf;
    int line = 1, chunk_line = 1, rc = 0;

    while (p < end && rc == 0) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        if (p != chunk && is_separator(p, eol)) {
            rc = read_yaml_chunk(in, chunk, (size_t)(p - chunk), chunk_line);
            chunk = p;
            chunk_line = line;
        }
        p = nl ? nl + 1 : end;
        line++;
    }
    if (rc == 0 && chunk < end)
        rc = read_yaml_chunk(in, chunk, (size_t)(end - chunk), chunk_line);
    return rc;
}

static int
read_buffer(struct audit_input *in, const char *buf, size_t len)
{
    size_t i = 0;

    while (i < len && isspace((unsigned char)buf[i]))
        i++;
    if (i < len && (buf[i] == '{' || buf[i] == '['))
        return read_json(in, buf, len);
    return read_yaml(in, buf, len);
}

/* The value of NAME (len bytes at name), or NULL when vars lacks it. */
static const char *
var_value(const struct audit_vars *v, const char *name, size_t len)
{
    char key[256];

    /* The last --set of a name wins, as the last assignment would. */
    for (size_t i = v->n; i-- > 0;)
        if (strlen(v->names[i]) == len && memcmp(v->names[i], name, len) == 0)
            return v->values[i];
    if (!v->env || len >= sizeof(key))
        return NULL;
    memcpy(key, name, len);
    key[len] = '\0';
    return getenv(key);
}

static bool
name_char(char c, bool first)
{
    return c == '_' || isalpha((unsigned char)c) ||
           (!first && isdigit((unsigned char)c));
}

/*
 * $NAME and ${NAME} replaced as envsubst replaces them, except that a
 * name vars does not know stays as it is. Owned, or NULL out of memory.
 */
static char *
render(const struct audit_vars *v, const char *buf, size_t len,
       size_t *out_len)
{
    struct strbuf sb = {0};
    size_t i = 0;

    while (i < len) {
        const char *dollar = memchr(buf + i, '$', len - i);
        size_t at = dollar ? (size_t)(dollar - buf) : len, start, end;
        bool brace;
        const char *value;

        strbuf_add(&sb, buf + i, at - i);
        if (at == len)
            break;
        brace = at + 1 < len && buf[at + 1] == '{';
        start = end = at + 1 + brace;
        while (end < len && name_char(buf[end], end == start))
            end++;
        if (end == start || (brace && (end == len || buf[end] != '}')) ||
            (value = var_value(v, buf + start, end - start)) == NULL) {
            strbuf_add(&sb, "$", 1);
            i = at + 1;
            continue;
        }
        strbuf_puts(&sb, value);
        i = end + brace;
    }
    *out_len = sb.len;
    return strbuf_take(&sb);
}

static int
read_one(struct audit_input *in, const char *path)
{
    size_t len;
    char *buf;
    int rc;

    buf = strcmp(path, "-") == 0 ? file_read_stream(stdin, SIZE_MAX, &len)
                                 : file_read(path, SIZE_MAX, &len);
    if (buf == NULL) {
        fprintf(stderr, "topogate audit: %s: %s\n",
                strcmp(path, "-") == 0 ? "stdin" : path, strerror(errno));
        return -1;
    }
    if (in->vars && (in->vars->n > 0 || in->vars->env)) {
        char *rendered = render(in->vars, buf, len, &len);
        free(buf);
        if ((buf = rendered) == NULL)
            return -2;
    }
    if ((rc = add_file(in, path)) == 0)
        rc = read_buffer(in, buf, len);
    free(buf);
    return rc;
}

static bool
wanted(const char *name)
{
    static const char *const exts[] = {".yaml", ".yml", ".json"};
    size_t n = strlen(name);

    for (size_t i = 0; i < 3; i++) {
        size_t e = strlen(exts[i]);
        if (n > e && strcmp(name + n - e, exts[i]) == 0)
            return true;
    }
    return false;
}

static int
by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_path(struct audit_input *in, const char *path, int depth);

/* A directory's entries in name order, so reports are stable. */
static int
read_dir(struct audit_input *in, const char *path, int depth)
{
    DIR *dir = opendir(path);
    struct dirent *ent;
    char **names = NULL;
    size_t n = 0;
    int rc = 0;

    if (dir == NULL) {
        fprintf(stderr, "topogate audit: %s: %s\n", path, strerror(errno));
        return -1;
    }
    while ((ent = readdir(dir)) != NULL) {
        char **grown;
        if (ent->d_name[0] == '.')
            continue;
        if ((grown = realloc(names, (n + 1) * sizeof(*names))) == NULL ||
            asprintf(&grown[n], "%s/%s", path, ent->d_name) < 0) {
            names = grown ? grown : names;
            rc = -2;
            break;
        }
        names = grown;
        n++;
    }
    closedir(dir);
    if (rc == 0 && n > 0)
        qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        int r = 0;
        if (rc > -2 && stat(names[i], &st) == 0 &&
            (S_ISDIR(st.st_mode) || wanted(names[i])))
            r = read_path(in, names[i], depth + 1);
        if (r < rc)
            rc = r;
        free(names[i]);
    }
    free(names);
    return rc;
}

static int
read_path(struct audit_input *in, const char *path, int depth)
{
    struct stat st;

    if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (depth >= WALK_DEPTH) {
            fprintf(stderr, "topogate audit: %s: nested too deep\n", path);
            return -1;
        }
        return read_dir(in, path, depth);
    }
    return read_one(in, path);
}

int
audit_input_read(struct audit_input *in, char *const *paths, size_t n)
{
    return audit_input_read_vars(in, paths, n, NULL);
}

int
audit_input_read_vars(struct audit_input *in, char *const *paths, size_t n,
                      const struct audit_vars *vars)
{
    int rc = 0;

    memset(in, 0, sizeof(*in));
    in->vars = vars;
    for (size_t i = 0; i < n && rc > -2; i++) {
        int r = read_path(in, paths[i], 0);
        if (r < rc)
            rc = r;
    }
    return rc;
}

void
audit_input_free(struct audit_input *in)
{
    for (size_t i = 0; i < in->n_docs; i++) {
        if (in->docs[i].evaluated)
            audit_item_free(&in->docs[i].item);
        cJSON_Delete(in->docs[i].object);
        free(in->docs[i].error);
        free(in->docs[i].unrendered);
    }
    free(in->docs);
    for (size_t i = 0; i < in->n_files; i++)
        free(in->files[i]);
    free(in->files);
    memset(in, 0, sizeof(*in));
}

int
audit_input_judge_unrendered(struct audit_doc *d)
{
    const struct audit_unrendered *blocking = NULL;

    if (!d->evaluated)
        return 0;
    for (size_t i = 0; i < d->n_unrendered; i++) {
        struct audit_unrendered *u = &d->unrendered[i];
        u->why = audit_unread_field(&d->item, d->object, u->path, u->key);
        if (u->why == NULL && blocking == NULL)
            blocking = u;
    }
    if (blocking == NULL)
        return 0;
    audit_item_free(&d->item);
    d->evaluated = false;
    return set_error(d, blocking->line, true, UNRENDERED_MESSAGE,
                     blocking->path, blocking->value);
}
