/*
 * kubeconfig.c - where the apiserver is and who we are: the pod's
 * service-account mount, or a kubeconfig file's current context.
 *
 * Only what a watch needs is read: server, CA, client certificate and
 * key, a token or token file. Anything that would change how we
 * authenticate or verify (exec plugins, auth providers, skipping TLS
 * verification) is refused by name rather than half-honoured.
 */
#include "kube/kube.h"
#include "kube/kubeconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/yamltree.h"
#include "lib/file.h"

#define KUBECONFIG_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

static char *
kubeconfig_join(const char *dir, const char *name)
{
    char *s;

    if (asprintf(&s, "%s/%s", dir, name) < 0)
        return NULL;
    return s;
}

int
kube_config_in_cluster(struct kube_config *c, char *err, size_t err_len)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    /* Tests point this at a temporary directory; nothing else should. */
    const char *dir = getenv("TOPOGATE_SA_DIR");
    bool v6;
    int rc;

    memset(c, 0, sizeof(*c));
    if (host == NULL || *host == '\0' || port == NULL || *port == '\0') {
        snprintf(err, err_len,
                 "not in a cluster: KUBERNETES_SERVICE_HOST "
                 "and KUBERNETES_SERVICE_PORT must be set");
        return -1;
    }
    if (dir == NULL || *dir == '\0')
        dir = KUBECONFIG_SA_DIR;
    /* An IPv6 address goes in brackets, as net.JoinHostPort does. */
    v6 = strchr(host, ':') != NULL && host[0] != '[';
    rc = asprintf(&c->server, "https://%s%s%s:%s", v6 ? "[" : "", host,
                  v6 ? "]" : "", port);
    if (rc < 0)
        c->server = NULL;
    c->ca_file = kubeconfig_join(dir, "ca.crt");
    c->token_file = kubeconfig_join(dir, "token");
    c->origin = strdup("in-cluster");
    if (c->server == NULL || c->ca_file == NULL || c->token_file == NULL ||
        c->origin == NULL) {
        snprintf(err, err_len, "out of memory");
        kube_config_free(c);
        return -1;
    }
    /* Without a token (automountServiceAccountToken: false) every call
     * would be a 401: better said once, now. */
    if (access(c->token_file, R_OK) != 0) {
        snprintf(err, err_len, "cannot read '%s': %s", c->token_file,
                 strerror(errno));
        kube_config_free(c);
        return -1;
    }
    return 0;
}

void
kube_config_free(struct kube_config *c)
{
    if (c == NULL)
        return;
    free(c->server);
    free(c->ca_file);
    free(c->ca_pem);
    free(c->cert_file);
    free(c->cert_pem);
    free(c->key_file);
    if (c->key_pem != NULL)
        file_free_secret(c->key_pem, strlen(c->key_pem));
    free(c->token_file);
    if (c->token != NULL)
        file_free_secret(c->token, strlen(c->token));
    free(c->origin);
    memset(c, 0, sizeof(*c));
}

/* --- kubeconfig ------------------------------------------------------- */

/* One kubeconfig being read: where it is, and the first error. */
struct kubeconfig_reader {
    const char *path;
    char *dir; /* relative paths in the file are relative to this */
    char *err;
    size_t err_len;
};

static int kubeconfig_fail(struct kubeconfig_reader *k, const struct ynode *at,
                           const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
kubeconfig_fail(struct kubeconfig_reader *k, const struct ynode *at,
                const char *fmt, ...)
{
    char msg[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (at != NULL)
        snprintf(k->err, k->err_len, "%s:%d:%d: %s", k->path, at->line,
                 at->column, msg);
    else
        snprintf(k->err, k->err_len, "%s: %s", k->path, msg);
    return -1;
}

/* The scalar under key in map, or NULL when absent or empty. */
static const char *
kubeconfig_str(struct kubeconfig_reader *k, const struct ynode *map,
               const char *key, int *bad)
{
    const struct ynode *v = ynode_get(map, key);

    if (v == NULL)
        return NULL;
    if (v->kind != YNODE_SCALAR) {
        *bad = kubeconfig_fail(k, v, "'%s' must be a string", key);
        return NULL;
    }
    if (v->plain && strcmp(v->scalar, "null") == 0)
        return NULL;
    return *v->scalar != '\0' ? v->scalar : NULL;
}

/* The entry of a named list (clusters, users, contexts) called name. */
static const struct ynode *
kubeconfig_find(struct kubeconfig_reader *k, const struct ynode *root,
                const char *list, const char *inner, const char *name,
                const struct ynode *at)
{
    const struct ynode *seq = ynode_get(root, list);

    if (seq != NULL && seq->kind == YNODE_SEQ) {
        for (size_t i = 0; i < seq->n_items; i++) {
            const struct ynode *e = seq->items[i];
            const struct ynode *n = ynode_get(e, "name");
            const struct ynode *v = ynode_get(e, inner);

            if (e->kind != YNODE_MAP || n == NULL || n->kind != YNODE_SCALAR ||
                strcmp(n->scalar, name) != 0)
                continue;
            if (v == NULL || v->kind != YNODE_MAP) {
                kubeconfig_fail(k, e, "%s '%s' has no '%s' map", list, name,
                                inner);
                return NULL;
            }
            return v;
        }
    }
    kubeconfig_fail(k, at, "no %s named '%s'", list, name);
    return NULL;
}

static int
kubeconfig_b64val(unsigned char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+')
        return 62;
    if (ch == '/')
        return 63;
    return -1;
}

/* Standard base64 with padding optional and whitespace ignored. */
static char *
kubeconfig_base64(const char *in)
{
    size_t n = strlen(in), o = 0;
    char *out = malloc(n / 4 * 3 + 4);
    unsigned acc = 0;
    int bits = 0;

    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)in[i];
        int v;

        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
            continue;
        if (ch == '=')
            break;
        if ((v = kubeconfig_b64val(ch)) < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    out[o] = '\0';
    return out;
}

/* A path from the file, made absolute against the kubeconfig's dir. */
static int
kubeconfig_path(struct kubeconfig_reader *k, const char *p, char **out)
{
    if (p == NULL)
        return 0;
    *out = p[0] == '/' ? strdup(p) : kubeconfig_join(k->dir, p);
    return *out != NULL ? 0 : kubeconfig_fail(k, NULL, "out of memory");
}

/* A *-data field: base64 PEM, decoded into an owned string. */
static int
kubeconfig_data(struct kubeconfig_reader *k, const struct ynode *map,
                const char *key, char **out)
{
    int bad = 0;
    const char *v = kubeconfig_str(k, map, key, &bad);

    if (bad)
        return -1;
    if (v == NULL)
        return 0;
    if ((*out = kubeconfig_base64(v)) == NULL || **out == '\0')
        return kubeconfig_fail(k, ynode_get(map, key),
                               "'%s' is not base64 data", key);
    return 0;
}

static bool
kubeconfig_true(const struct ynode *v)
{
    return v != NULL && v->kind == YNODE_SCALAR &&
           (strcmp(v->scalar, "true") == 0 || strcmp(v->scalar, "True") == 0);
}

static int
kubeconfig_cluster(struct kubeconfig_reader *k, const struct ynode *cl,
                   struct kube_config *c)
{
    static const char *const unsupported[] = {"tls-server-name", "proxy-url"};
    const struct ynode *v;
    const char *server;
    int bad = 0;

    if ((v = ynode_get(cl, "insecure-skip-tls-verify")) != NULL &&
        kubeconfig_true(v))
        return kubeconfig_fail(k, v,
                               "insecure-skip-tls-verify is refused: "
                               "topogate always verifies the "
                               "apiserver's certificate");
    for (size_t i = 0; i < sizeof(unsupported) / sizeof(*unsupported); i++)
        if ((v = ynode_get(cl, unsupported[i])) != NULL)
            return kubeconfig_fail(k, v, "'%s' is not supported",
                                   unsupported[i]);
    server = kubeconfig_str(k, cl, "server", &bad);
    if (bad)
        return -1;
    if (server == NULL)
        return kubeconfig_fail(k, cl, "cluster has no 'server'");
    if (strncmp(server, "https://", 8) != 0)
        return kubeconfig_fail(k, ynode_get(cl, "server"),
                               "server '%s' is not https://", server);
    if ((c->server = strdup(server)) == NULL)
        return kubeconfig_fail(k, NULL, "out of memory");
    /* Trailing slashes would double in "server" + "/api/v1/...". */
    for (size_t n = strlen(c->server); n > 8 && c->server[n - 1] == '/'; n--)
        c->server[n - 1] = '\0';
    if (kubeconfig_data(k, cl, "certificate-authority-data", &c->ca_pem) != 0)
        return -1;
    if (c->ca_pem == NULL &&
        kubeconfig_path(k, kubeconfig_str(k, cl, "certificate-authority", &bad),
                        &c->ca_file) != 0)
        return -1;
    return bad ? -1 : 0;
}

static int
kubeconfig_user(struct kubeconfig_reader *k, const struct ynode *u,
                struct kube_config *c)
{
    static const char *const unsupported[] = {
        "exec", "auth-provider", "username", "password",
        "as",   "as-groups",     "as-uid"};
    const struct ynode *v;
    const char *token;
    int bad = 0;

    for (size_t i = 0; i < sizeof(unsupported) / sizeof(*unsupported); i++)
        if ((v = ynode_get(u, unsupported[i])) != NULL)
            return kubeconfig_fail(k, v,
                                   "user '%s' is not supported (use a "
                                   "client certificate, token or tokenFile)",
                                   unsupported[i]);
    if (kubeconfig_data(k, u, "client-certificate-data", &c->cert_pem) != 0 ||
        kubeconfig_data(k, u, "client-key-data", &c->key_pem) != 0)
        return -1;
    if (c->cert_pem == NULL &&
        kubeconfig_path(k, kubeconfig_str(k, u, "client-certificate", &bad),
                        &c->cert_file) != 0)
        return -1;
    if (c->key_pem == NULL &&
        kubeconfig_path(k, kubeconfig_str(k, u, "client-key", &bad),
                        &c->key_file) != 0)
        return -1;
    if ((token = kubeconfig_str(k, u, "token", &bad)) != NULL &&
        (c->token = strdup(token)) == NULL)
        return kubeconfig_fail(k, NULL, "out of memory");
    if (kubeconfig_path(k, kubeconfig_str(k, u, "tokenFile", &bad),
                        &c->token_file) != 0)
        return -1;
    if (bad)
        return -1;
    if ((c->cert_file != NULL || c->cert_pem != NULL) !=
        (c->key_file != NULL || c->key_pem != NULL))
        return kubeconfig_fail(k, u,
                               "a client certificate needs its key, "
                               "and a key its certificate");
    return 0;
}

int
kube_config_load(const char *path, struct kube_config *c, char *err,
                 size_t err_len)
{
    struct kubeconfig_reader k = {path, NULL, err, err_len};
    struct load_error lerr = {0};
    struct ytree *t = NULL;
    const struct ynode *root, *cur, *ctx, *cl, *u;
    const char *name, *slash;
    char *bytes;
    size_t len;
    int bad = 0, rc = -1;

    memset(c, 0, sizeof(*c));
    if ((bytes = file_read(path, FILE_MAX, &len)) == NULL) {
        snprintf(err, err_len, "cannot read kubeconfig '%s': %m", path);
        return -1;
    }
    slash = strrchr(path, '/');
    k.dir = slash == NULL ? strdup(".")
                          : strndup(path, slash == path ? 1 : slash - path);
    if (k.dir == NULL) {
        kubeconfig_fail(&k, NULL, "out of memory");
        goto out;
    }
    if ((t = ytree_parse(bytes, len, &lerr)) == NULL) {
        snprintf(err, err_len, "%s:%d:%d: %s", path, lerr.line, lerr.column,
                 lerr.message);
        goto out;
    }
    if (t->n_docs != 1 || (root = t->docs[0])->kind != YNODE_MAP) {
        kubeconfig_fail(&k, NULL, "not a kubeconfig (one YAML map)");
        goto out;
    }
    cur = ynode_get(root, "current-context");
    if ((name = kubeconfig_str(&k, root, "current-context", &bad)) == NULL) {
        if (!bad)
            kubeconfig_fail(&k, NULL, "no current-context");
        goto out;
    }
    if ((ctx = kubeconfig_find(&k, root, "contexts", "context", name, cur)) ==
        NULL)
        goto out;
    if ((name = kubeconfig_str(&k, ctx, "cluster", &bad)) == NULL) {
        if (!bad)
            kubeconfig_fail(&k, ctx, "context has no 'cluster'");
        goto out;
    }
    if ((cl = kubeconfig_find(&k, root, "clusters", "cluster", name,
                              ynode_get(ctx, "cluster"))) == NULL ||
        kubeconfig_cluster(&k, cl, c) != 0)
        goto out;
    /* A context without a user talks to the apiserver anonymously. */
    if ((name = kubeconfig_str(&k, ctx, "user", &bad)) != NULL) {
        if ((u = kubeconfig_find(&k, root, "users", "user", name,
                                 ynode_get(ctx, "user"))) == NULL ||
            kubeconfig_user(&k, u, c) != 0)
            goto out;
    } else if (bad) {
        goto out;
    }
    if ((c->origin = strdup(path)) == NULL) {
        kubeconfig_fail(&k, NULL, "out of memory");
        goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        kube_config_free(c);
    ytree_free(t);
    free(k.dir);
    file_free_secret(bytes, len);
    return rc;
}

/* --- in-memory PEM, as files ------------------------------------------- */

static const char *const kubeconfig_pem_names[] = {"ca.crt", "client.crt",
                                                   "client.key"};

static int
kubeconfig_write_pem(const char *dir, const char *name, const char *pem,
                     char **path, char *err, size_t err_len)
{
    size_t len = strlen(pem);
    ssize_t wr;
    int fd;

    free(*path);
    if ((*path = kubeconfig_join(dir, name)) == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    fd = open(*path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, err_len, "cannot create '%s': %s", *path,
                 strerror(errno));
        return -1;
    }
    wr = write(fd, pem, len);
    if (close(fd) != 0 || wr != (ssize_t)len) {
        snprintf(err, err_len, "cannot write '%s'", *path);
        return -1;
    }
    return 0;
}

int
kubeconfig_pem_files(struct kube_config *c, char **dir, char *err,
                     size_t err_len)
{
    const char *pem[] = {c->ca_pem, c->cert_pem, c->key_pem};
    char **file[] = {&c->ca_file, &c->cert_file, &c->key_file};
    const char *tmp = getenv("TMPDIR");

    *dir = NULL;
    if (c->ca_pem == NULL && c->cert_pem == NULL && c->key_pem == NULL)
        return 0;
    if (asprintf(dir, "%s/topogate-kube.XXXXXX", tmp && *tmp ? tmp : "/tmp") <
        0) {
        *dir = NULL;
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    if (mkdtemp(*dir) == NULL) {
        snprintf(err, err_len, "cannot create '%s': %s", *dir, strerror(errno));
        free(*dir);
        *dir = NULL;
        return -1;
    }
    for (size_t i = 0; i < 3; i++)
        if (pem[i] != NULL &&
            kubeconfig_write_pem(*dir, kubeconfig_pem_names[i], pem[i], file[i],
                                 err, err_len) != 0)
            return -1;
    return 0;
}

void
kubeconfig_pem_remove(const char *dir)
{
    if (dir == NULL)
        return;
    for (size_t i = 0; i < 3; i++) {
        char *p = kubeconfig_join(dir, kubeconfig_pem_names[i]);

        if (p != NULL)
            unlink(p);
        free(p);
    }
    rmdir(dir);
}
