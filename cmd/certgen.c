/*
 * certgen.c - `topogate certgen`: a CA and a serving certificate for the
 * webhook's Service, for clusters without cert-manager.
 *
 * Both keys are ECDSA P-256: a handshake costs a fraction of what RSA
 * costs, and every apiserver and kubelet speaks it. The CA's key is
 * thrown away once the leaf is signed: rotation is a new CA and a new
 * leaf, with the new CA bundle patched into the webhook configuration
 * (what the chart's hook Job does with cabundle-patch.json).
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* Default lifetimes: a leaf renewed yearly by `helm upgrade`, a CA ten. */
#define CERTGEN_LEAF_DAYS 365
#define CERTGEN_CA_DAYS 3650
#define CERTGEN_DAYS_MAX 36500

/* notBefore this far in the past, for nodes whose clocks run behind. */
#define CERTGEN_BACKDATE_S 3600

#define CERTGEN_WEBHOOKS_MAX 1000

static const char certgen_usage[] =
    "usage: topogate certgen --service NAME --namespace NS --out DIR\n"
    "                        [--secret-name NAME]\n"
    "                        [--webhook-config NAME --webhooks N] [--days D]\n"
    "                        [--ca-dir DIR [--ca-secret-name NAME]]\n"
    "\n"
    "  --service NAME         the webhook's Service: the certificate names\n"
    "                         NAME, NAME.NS, NAME.NS.svc and\n"
    "                         NAME.NS.svc.cluster.local\n"
    "  --namespace NS         the Service's namespace\n"
    "  --out DIR              writes DIR/ca.crt, DIR/tls.crt, DIR/tls.key "
    "(0600)\n"
    "  --secret-name NAME     also DIR/secret.yaml, a kubernetes.io/tls "
    "Secret\n"
    "  --webhook-config NAME  also DIR/cabundle-patch.json, a JSON Patch "
    "for\n"
    "  --webhooks N           clientConfig.caBundle of webhooks 0..N-1, for\n"
    "                         kubectl patch mutatingwebhookconfiguration "
    "NAME\n"
    "                         --type=json --patch-file\n"
    "  --days D               the serving certificate's lifetime (default "
    "365);\n"
    "                         the CA's is 3650 days, or D if longer\n"
    "  --ca-dir DIR           sign with DIR/ca.crt and DIR/ca.key when both\n"
    "                         exist and the CA outlives the new certificate;\n"
    "                         otherwise make a new CA. DIR/ca.key: PEM\n"
    "  --ca-secret-name NAME  also DIR/ca-secret.yaml, an Opaque Secret with\n"
    "                         ca.crt, ca.key (and cabundle-patch.json)\n"
    "Keys are ECDSA P-256. The CA bundle (base64 PEM) goes to stdout.\n"
    "Exit 0, 1 on failure, 2 on a usage error.\n";

struct certgen_opts {
    const char *service;
    const char *namespace_;
    const char *out;
    const char *secret_name;
    const char *webhook_config;
    const char *ca_dir;
    const char *ca_secret_name;
    long webhooks; /* -1: not given */
    long days;
};

/* One X.509v3 extension, written as in openssl.cnf. */
struct certgen_ext {
    int nid;
    const char *value;
};

/* A file to write into --out: its name, bytes and mode. */
struct certgen_file {
    const char *name;
    char *data; /* owned */
    size_t len;
    mode_t mode;
    char tmp[4096];
};

static void __attribute__((format(printf, 1, 2)))
certgen_error(const char *fmt, ...)
{
    va_list ap;

    fputs("topogate certgen: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* The last OpenSSL reason, for a message; "unknown" when there is none. */
static const char *
certgen_ssl_reason(void)
{
    const char *r = ERR_reason_error_string(ERR_peek_last_error());

    return r != NULL ? r : "unknown";
}

/* A DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, 63 at most. */
static bool
certgen_is_label(const char *s, size_t n)
{
    if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '-'))
            return false;
    return true;
}

/* A DNS-1123 subdomain: labels joined by dots, 253 at most. */
static bool
certgen_is_subdomain(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 253)
        return false;
    for (const char *dot; (dot = strchr(s, '.')) != NULL; s = dot + 1)
        if (!certgen_is_label(s, (size_t)(dot - s)))
            return false;
    return certgen_is_label(s, strlen(s));
}

static int
certgen_number(const char *opt, const char *arg, long min, long max, long *out)
{
    char *end;

    errno = 0;
    *out = strtol(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || *out < min || *out > max) {
        certgen_error("%s '%s': expected a whole number from %ld to %ld", opt,
                      arg, min, max);
        return -1;
    }
    return 0;
}

/* 0, 1 for --help (printed), or 2 for a usage error (printed). */
static int
certgen_options(int argc, char **argv, struct certgen_opts *o)
{
    static const struct option longopts[] = {
        {"service", required_argument, NULL, 's'},
        {"namespace", required_argument, NULL, 'n'},
        {"out", required_argument, NULL, 'o'},
        {"secret-name", required_argument, NULL, 'S'},
        {"webhook-config", required_argument, NULL, 'w'},
        {"webhooks", required_argument, NULL, 'N'},
        {"days", required_argument, NULL, 'd'},
        {"ca-dir", required_argument, NULL, 'C'},
        {"ca-secret-name", required_argument, NULL, 'A'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;

    optind = 0;
    while ((ch = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (ch) {
        case 's':
            o->service = optarg;
            break;
        case 'n':
            o->namespace_ = optarg;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'S':
            o->secret_name = optarg;
            break;
        case 'w':
            o->webhook_config = optarg;
            break;
        case 'N':
            if (certgen_number("--webhooks", optarg, 1, CERTGEN_WEBHOOKS_MAX,
                               &o->webhooks) != 0)
                return 2;
            break;
        case 'd':
            if (certgen_number("--days", optarg, 1, CERTGEN_DAYS_MAX,
                               &o->days) != 0)
                return 2;
            break;
        case 'C':
            o->ca_dir = optarg;
            break;
        case 'A':
            o->ca_secret_name = optarg;
            break;
        case 'h':
            fputs(certgen_usage, stdout);
            return 1;
        default:
            fputs(certgen_usage, stderr);
            return 2;
        }
    }
    if (optind < argc) {
        certgen_error("unexpected argument '%s'", argv[optind]);
        return 2;
    }
    if (o->service == NULL || o->namespace_ == NULL || o->out == NULL) {
        certgen_error("--service, --namespace and --out are required");
        fputs(certgen_usage, stderr);
        return 2;
    }
    if (!certgen_is_label(o->service, strlen(o->service))) {
        certgen_error("--service '%s': not a DNS-1123 label", o->service);
        return 2;
    }
    if (!certgen_is_label(o->namespace_, strlen(o->namespace_))) {
        certgen_error("--namespace '%s': not a DNS-1123 label", o->namespace_);
        return 2;
    }
    if (o->secret_name != NULL && !certgen_is_subdomain(o->secret_name)) {
        certgen_error("--secret-name '%s': not a DNS-1123 subdomain",
                      o->secret_name);
        return 2;
    }
    if (o->webhook_config != NULL && !certgen_is_subdomain(o->webhook_config)) {
        certgen_error("--webhook-config '%s': not a DNS-1123 subdomain",
                      o->webhook_config);
        return 2;
    }
    if ((o->webhook_config == NULL) != (o->webhooks < 0)) {
        certgen_error("--webhook-config NAME and --webhooks N go together");
        return 2;
    }
    if (o->ca_secret_name != NULL && !certgen_is_subdomain(o->ca_secret_name)) {
        certgen_error("--ca-secret-name '%s': not a DNS-1123 subdomain",
                      o->ca_secret_name);
        return 2;
    }
    if (o->ca_secret_name != NULL && o->ca_dir == NULL) {
        certgen_error("--ca-secret-name needs --ca-dir");
        return 2;
    }
    if (o->out[0] == '\0') {
        certgen_error("--out: empty directory name");
        return 2;
    }
    return 0;
}

/* Adds one extension written in openssl.cnf syntax; 0 or -1. */
static int
certgen_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509_EXTENSION *ext;
    int ok;

    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (ext == NULL)
        return -1;
    ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok == 1 ? 0 : -1;
}

/* A random positive 127-bit serial, as RFC 5280 asks (at most 20 octets). */
static int
certgen_serial(X509 *cert)
{
    unsigned char bytes[16];
    BIGNUM *bn;
    int ok;

    if (RAND_bytes(bytes, sizeof(bytes)) != 1)
        return -1;
    bytes[0] &= 0x7f; /* positive */
    bytes[0] |= 0x40; /* and always 16 octets long */
    bn = BN_bin2bn(bytes, sizeof(bytes), NULL);
    if (bn == NULL)
        return -1;
    ok = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != NULL;
    BN_free(bn);
    return ok ? 0 : -1;
}

/*
 * A certificate for key named cn, signed by issuer_key (issuer NULL:
 * self-signed). exts are {nid, value} pairs ended by nid 0. NULL on
 * failure.
 */
static X509 *
certgen_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key,
             long days, const struct certgen_ext *exts)
{
    X509 *cert = X509_new();
    X509_NAME *name = X509_NAME_new();

    if (cert == NULL || name == NULL ||
        X509_set_version(cert, X509_VERSION_3) != 1 ||
        certgen_serial(cert) != 0 ||
        X509_gmtime_adj(X509_getm_notBefore(cert), -CERTGEN_BACKDATE_S) ==
            NULL ||
        X509_time_adj_ex(X509_getm_notAfter(cert), (int)days, 0, NULL) ==
            NULL ||
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                   (const unsigned char *)cn, -1, -1, 0) != 1 ||
        X509_set_subject_name(cert, name) != 1 ||
        X509_set_issuer_name(
            cert, issuer != NULL ? X509_get_subject_name(issuer) : name) != 1 ||
        X509_set_pubkey(cert, key) != 1)
        goto fail;
    for (; exts->nid != 0; exts++)
        if (certgen_ext(cert, issuer != NULL ? issuer : cert, exts->nid,
                        exts->value) != 0)
            goto fail;
    if (X509_sign(cert, issuer_key, EVP_sha256()) <= 0)
        goto fail;
    X509_NAME_free(name);
    return cert;
fail:
    X509_NAME_free(name);
    X509_free(cert);
    return NULL;
}

/*
 * The kept CA from dir/ca.crt and dir/ca.key into *cert and *key: 0 when
 * loaded and it outlives a certificate of `days`, 1 when there is none to
 * use (neither file, or it expires too soon: said on stderr), -1 on an
 * error (one file without the other, unreadable, not a CA, key mismatch).
 */
static int
certgen_load_ca(const char *dir, long days, X509 **cert, EVP_PKEY **key)
{
    char crt_path[4096], key_path[4096];
    FILE *f;
    bool has_crt, has_key;
    time_t until = time(NULL) + days * 86400;

    snprintf(crt_path, sizeof(crt_path), "%s/ca.crt", dir);
    snprintf(key_path, sizeof(key_path), "%s/ca.key", dir);
    has_crt = access(crt_path, F_OK) == 0;
    has_key = access(key_path, F_OK) == 0;
    if (!has_crt && !has_key)
        return 1;
    if (has_crt != has_key) {
        certgen_error("--ca-dir '%s': '%s' without '%s'", dir,
                      has_crt ? "ca.crt" : "ca.key",
                      has_crt ? "ca.key" : "ca.crt");
        return -1;
    }
    if ((f = fopen(crt_path, "r")) == NULL) {
        certgen_error("'%s': %s", crt_path, strerror(errno));
        return -1;
    }
    *cert = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    if ((f = fopen(key_path, "r")) == NULL) {
        certgen_error("'%s': %s", key_path, strerror(errno));
        return -1;
    }
    *key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    if (*cert == NULL || *key == NULL) {
        certgen_error("--ca-dir '%s': not PEM: %s", dir, certgen_ssl_reason());
        return -1;
    }
    if (X509_check_ca(*cert) == 0 || X509_check_private_key(*cert, *key) != 1) {
        certgen_error("--ca-dir '%s': not a CA with its key", dir);
        return -1;
    }
    if (X509_cmp_time(X509_get0_notAfter(*cert), &until) <= 0) {
        fprintf(stderr, "topogate certgen: the CA in %s expires within %ld "
                "days: making a new one\n", dir, days);
        X509_free(*cert);
        EVP_PKEY_free(*key);
        *cert = NULL;
        *key = NULL;
        return 1;
    }
    return 0;
}

/* What a memory BIO holds, as an owned NUL-terminated string. */
static char *
certgen_bio_take(BIO *bio, size_t *len)
{
    char *data, *copy;
    long n = BIO_get_mem_data(bio, &data);

    if (n < 0)
        return NULL;
    copy = malloc((size_t)n + 1);
    if (copy == NULL)
        return NULL;
    memcpy(copy, data, (size_t)n);
    copy[n] = '\0';
    *len = (size_t)n;
    return copy;
}

static char *
certgen_pem_cert(X509 *cert, size_t *len)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *pem = NULL;

    if (bio != NULL && PEM_write_bio_X509(bio, cert) == 1)
        pem = certgen_bio_take(bio, len);
    BIO_free(bio);
    return pem;
}

/* PKCS#8, unencrypted: what libmicrohttpd, GnuTLS and kubectl read. */
static char *
certgen_pem_key(EVP_PKEY *key, size_t *len)
{
    BIO *bio = BIO_new(BIO_s_mem());
    char *pem = NULL;

    if (bio != NULL &&
        PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) == 1)
        pem = certgen_bio_take(bio, len);
    if (bio != NULL) {
        char *data;
        long n = BIO_get_mem_data(bio, &data);
        if (n > 0)
            OPENSSL_cleanse(data, (size_t)n);
    }
    BIO_free(bio);
    return pem;
}

/* Base64 without line breaks, owned; NULL when out of memory. */
static char *
certgen_base64(const char *data, size_t len)
{
    char *out = malloc(4 * ((len + 2) / 3) + 1);

    if (out != NULL)
        EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)data,
                        (int)len);
    return out;
}

/* An owned string from a format; NULL when out of memory. */
static char *__attribute__((format(printf, 2, 3)))
certgen_format(size_t *len, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    *len = (size_t)n;
    return s;
}

/* Both Secrets begin alike: name, namespace, then the type. */
#define SECRET_HEAD                                                          \
    "apiVersion: v1\n"                                                       \
    "kind: Secret\n"                                                         \
    "metadata:\n"                                                            \
    "  name: %s\n"                                                           \
    "  namespace: %s\n"                                                      \
    "  labels:\n"                                                            \
    "    app.kubernetes.io/name: topogate\n"                                 \
    "    app.kubernetes.io/managed-by: topogate-certgen\n"                   \
    "type: %s\n"                                                             \
    "data:\n"

static char *
certgen_ca_secret(const struct certgen_opts *o, const char *ca_b64,
                  const char *key_b64, const char *patch_b64, size_t *len)
{
    return certgen_format(len,
                          SECRET_HEAD "  ca.crt: %s\n"
                                      "  ca.key: %s\n"
                                      "%s%s%s",
                          o->ca_secret_name, o->namespace_, "Opaque", ca_b64,
                          key_b64,
                          patch_b64 != NULL ? "  cabundle-patch.json: " : "",
                          patch_b64 != NULL ? patch_b64 : "",
                          patch_b64 != NULL ? "\n" : "");
}

static char *
certgen_secret(const struct certgen_opts *o, const char *ca_b64,
               const char *crt_b64, const char *key_b64, size_t *len)
{
    return certgen_format(len,
                          SECRET_HEAD "  ca.crt: %s\n"
                                      "  tls.crt: %s\n"
                                      "  tls.key: %s\n",
                          o->secret_name, o->namespace_, "kubernetes.io/tls",
                          ca_b64, crt_b64, key_b64);
}

/*
 * "add" rather than "replace": it sets caBundle whether or not the
 * webhook configuration already has one (RFC 6902 4.1).
 */
static char *
certgen_patch(long webhooks, const char *ca_b64, size_t *len)
{
    size_t cap = (size_t)webhooks * (strlen(ca_b64) + 96) + 8, n = 0;
    char *out = malloc(cap);

    if (out == NULL)
        return NULL;
    n += (size_t)snprintf(out + n, cap - n, "[\n");
    for (long i = 0; i < webhooks; i++)
        n += (size_t)snprintf(out + n, cap - n,
                              "  {\"op\": \"add\", \"path\": "
                              "\"/webhooks/%ld/clientConfig/caBundle\", "
                              "\"value\": \"%s\"}%s\n",
                              i, ca_b64, i + 1 < webhooks ? "," : "");
    n += (size_t)snprintf(out + n, cap - n, "]\n");
    *len = n;
    return out;
}

/* --out: made when missing; anything but a directory is refused. */
static int
certgen_out_dir(const char *dir)
{
    struct stat st;

    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return 0;
        certgen_error("--out '%s': exists and is not a directory", dir);
        return -1;
    }
    if (errno != ENOENT || mkdir(dir, 0755) != 0) {
        certgen_error("--out '%s': %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* Writes f into a temporary file beside its final name; 0 or -1. */
static int
certgen_write_tmp(const char *dir, struct certgen_file *f)
{
    size_t done = 0;
    int fd;

    snprintf(f->tmp, sizeof(f->tmp), "%s/.%s.XXXXXX", dir, f->name);
    fd = mkstemp(f->tmp); /* 0600 until told otherwise */
    if (fd < 0) {
        certgen_error("cannot create a file in '%s': %s", dir, strerror(errno));
        f->tmp[0] = '\0';
        return -1;
    }
    if (fchmod(fd, f->mode) != 0)
        goto fail;
    while (done < f->len) {
        ssize_t n = write(fd, f->data + done, f->len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto fail;
        done += (size_t)n;
    }
    if (fsync(fd) != 0)
        goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    return 0;
fail:
    certgen_error("cannot write '%s': %s", f->tmp, strerror(errno));
    if (fd >= 0)
        close(fd);
    unlink(f->tmp);
    f->tmp[0] = '\0';
    return -1;
}

/*
 * Every file goes to a temporary name first, and only when all are
 * written are they renamed into place: a reader never sees a half
 * written file, and a failure leaves the old set untouched.
 */
static int
certgen_write_all(const char *dir, struct certgen_file *files, size_t n)
{
    char path[4096];
    size_t i;
    int ret = -1;

    for (i = 0; i < n; i++)
        if (files[i].data != NULL && certgen_write_tmp(dir, &files[i]) != 0)
            goto out;
    for (i = 0; i < n; i++) {
        if (files[i].data == NULL)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
        if (rename(files[i].tmp, path) != 0) {
            certgen_error("cannot write '%s': %s", path, strerror(errno));
            goto out;
        }
        files[i].tmp[0] = '\0';
    }
    ret = 0;
out:
    for (i = 0; i < n; i++)
        if (files[i].tmp[0] != '\0')
            unlink(files[i].tmp);
    return ret;
}

int
cmd_certgen(int argc, char **argv)
{
    struct certgen_opts o = {.webhooks = -1, .days = CERTGEN_LEAF_DAYS};
    struct certgen_file files[] = {
        {.name = "ca.crt", .mode = 0644},
        {.name = "tls.crt", .mode = 0644},
        {.name = "tls.key", .mode = 0600},
        {.name = "secret.yaml", .mode = 0600}, /* it holds the key too */
        {.name = "cabundle-patch.json", .mode = 0644},
        {.name = "ca-secret.yaml", .mode = 0600}, /* the CA's key */
    };
    enum { F_CA, F_CRT, F_KEY, F_SECRET, F_PATCH, F_CASECRET, F_N };
    EVP_PKEY *ca_key = NULL, *key = NULL;
    X509 *ca = NULL, *leaf = NULL;
    char *ca_b64 = NULL, *crt_b64 = NULL, *key_b64 = NULL;
    char cn[256], ca_cn[300], san[1024];
    const struct certgen_ext ca_exts[] = {
        {NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
        {NID_key_usage, "critical,keyCertSign,cRLSign"},
        {NID_subject_key_identifier, "hash"},
        {0, NULL},
    };
    const struct certgen_ext leaf_exts[] = {
        {NID_basic_constraints, "critical,CA:FALSE"},
        {NID_key_usage, "critical,digitalSignature"},
        {NID_ext_key_usage, "serverAuth"},
        {NID_subject_alt_name, san},
        {NID_subject_key_identifier, "hash"},
        {NID_authority_key_identifier, "keyid:always"},
        {0, NULL},
    };
    int ret = 1;
    bool kept_ca = false;
    char *cakey_pem = NULL, *cakey_b64 = NULL, *patch_b64 = NULL;
    size_t cakey_len = 0;

    switch (certgen_options(argc, argv, &o)) {
    case 0:
        break;
    case 1:
        return 0; /* --help */
    default:
        return 2;
    }
    snprintf(cn, sizeof(cn), "%s.%s.svc", o.service, o.namespace_);
    snprintf(san, sizeof(san),
             "DNS:%s,DNS:%s.%s,DNS:%s.%s.svc,"
             "DNS:%s.%s.svc.cluster.local",
             o.service, o.service, o.namespace_, o.service, o.namespace_,
             o.service, o.namespace_);
    snprintf(ca_cn, sizeof(ca_cn), "topogate CA for %s", cn);
    if (o.ca_dir != NULL) {
        int r = certgen_load_ca(o.ca_dir, o.days, &ca, &ca_key);
        if (r < 0)
            goto out;
        kept_ca = r == 0;
    }
    if (ca_key == NULL)
        ca_key = EVP_EC_gen("P-256");
    key = EVP_EC_gen("P-256");
    if (ca_key == NULL || key == NULL) {
        certgen_error("cannot make a P-256 key: %s", certgen_ssl_reason());
        goto out;
    }
    if (ca == NULL)
        ca = certgen_cert(ca_key, ca_cn, NULL, ca_key,
                          o.days > CERTGEN_CA_DAYS ? o.days : CERTGEN_CA_DAYS,
                          ca_exts);
    leaf = ca != NULL ? certgen_cert(key, cn, ca, ca_key, o.days, leaf_exts)
                      : NULL;
    if (leaf == NULL) {
        certgen_error("cannot make the certificates: %s", certgen_ssl_reason());
        goto out;
    }
    files[F_CA].data = certgen_pem_cert(ca, &files[F_CA].len);
    files[F_CRT].data = certgen_pem_cert(leaf, &files[F_CRT].len);
    files[F_KEY].data = certgen_pem_key(key, &files[F_KEY].len);
    if (files[F_CA].data == NULL || files[F_CRT].data == NULL ||
        files[F_KEY].data == NULL)
        goto oom;
    ca_b64 = certgen_base64(files[F_CA].data, files[F_CA].len);
    if (ca_b64 == NULL)
        goto oom;
    if (o.secret_name != NULL) {
        crt_b64 = certgen_base64(files[F_CRT].data, files[F_CRT].len);
        key_b64 = certgen_base64(files[F_KEY].data, files[F_KEY].len);
        if (crt_b64 == NULL || key_b64 == NULL)
            goto oom;
        files[F_SECRET].data =
            certgen_secret(&o, ca_b64, crt_b64, key_b64, &files[F_SECRET].len);
        if (files[F_SECRET].data == NULL)
            goto oom;
    }
    if (o.webhook_config != NULL) {
        files[F_PATCH].data =
            certgen_patch(o.webhooks, ca_b64, &files[F_PATCH].len);
        if (files[F_PATCH].data == NULL)
            goto oom;
    }
    if (o.ca_secret_name != NULL) {
        cakey_pem = certgen_pem_key(ca_key, &cakey_len);
        cakey_b64 = cakey_pem != NULL ? certgen_base64(cakey_pem, cakey_len)
                                      : NULL;
        if (cakey_b64 == NULL)
            goto oom;
        if (files[F_PATCH].data != NULL &&
            (patch_b64 = certgen_base64(files[F_PATCH].data,
                                        files[F_PATCH].len)) == NULL)
            goto oom;
        files[F_CASECRET].data = certgen_ca_secret(
            &o, ca_b64, cakey_b64, patch_b64, &files[F_CASECRET].len);
        if (files[F_CASECRET].data == NULL)
            goto oom;
    }
    if (certgen_out_dir(o.out) != 0 || certgen_write_all(o.out, files, F_N))
        goto out;

    fprintf(stderr,
            "topogate certgen: wrote %s/{ca.crt,tls.crt,tls.key} for %s "
            "(%ld days)\n",
            o.out, cn, o.days);
    if (o.secret_name != NULL)
        fprintf(stderr,
                "topogate certgen: wrote %s/secret.yaml: Secret %s/%s\n", o.out,
                o.namespace_, o.secret_name);
    if (o.webhook_config != NULL)
        fprintf(stderr,
                "topogate certgen: wrote %s/cabundle-patch.json: kubectl "
                "patch mutatingwebhookconfiguration %s --type=json "
                "--patch-file %s/cabundle-patch.json\n",
                o.out, o.webhook_config, o.out);
    if (o.ca_dir != NULL)
        fprintf(stderr, "topogate certgen: %s the CA\n",
                kept_ca ? "kept" : "made");
    if (o.ca_secret_name != NULL)
        fprintf(stderr,
                "topogate certgen: wrote %s/ca-secret.yaml: Secret %s/%s\n",
                o.out, o.namespace_, o.ca_secret_name);
    printf("%s\n", ca_b64);
    ret = fflush(stdout) == 0 ? 0 : 1;
    goto out;
oom:
    certgen_error("out of memory");
out:
    for (size_t i = 0; i < F_N; i++) {
        if (files[i].data != NULL)
            OPENSSL_cleanse(files[i].data, files[i].len);
        free(files[i].data);
    }
    if (key_b64 != NULL)
        OPENSSL_cleanse(key_b64, strlen(key_b64));
    if (cakey_b64 != NULL)
        OPENSSL_cleanse(cakey_b64, strlen(cakey_b64));
    if (cakey_pem != NULL)
        OPENSSL_cleanse(cakey_pem, cakey_len);
    free(cakey_b64);
    free(cakey_pem);
    free(patch_b64);
    free(key_b64);
    free(crt_b64);
    free(ca_b64);
    X509_free(leaf);
    X509_free(ca);
    EVP_PKEY_free(key);
    EVP_PKEY_free(ca_key);
    return ret;
}
