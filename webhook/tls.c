/*
 * tls.c - loading certificate, key and client CA into GnuTLS credentials
 * that sessions share, and handing them to a session at connect.
 */
#include "webhook/tls.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/x509.h>

#include "lib/file.h"
#include "lib/log.h"

/* A serial is at most 20 octets (RFC 5280 4.1.2.2). */
#define TLS_SERIAL_MAX 20

struct tls_creds {
    atomic_int refs;
    gnutls_certificate_credentials_t cred;
    int64_t not_after;
    int client_auth; /* a client CA was given */
    char serial[2 * TLS_SERIAL_MAX + 1];
};

/* The certificates of a PEM chain, and the facts kept from the first. */
static int
tls_parse_chain(struct tls_creds *c, const char *path, const char *pem,
                size_t len, gnutls_x509_crt_t **crts, unsigned int *n,
                char *err, size_t err_len)
{
    gnutls_datum_t d = {.data = (unsigned char *)pem, .size = (unsigned)len};
    unsigned char serial[TLS_SERIAL_MAX + 1];
    size_t size = sizeof(serial), i = 0, o = 0;
    int rc;

    rc = gnutls_x509_crt_list_import2(crts, n, &d, GNUTLS_X509_FMT_PEM, 0);
    if (rc < 0 || *n == 0) {
        snprintf(err, err_len, "'%s': no PEM certificate (%s)", path,
                 rc < 0 ? gnutls_strerror(rc) : "empty");
        return -1;
    }
    c->not_after = (int64_t)gnutls_x509_crt_get_expiration_time((*crts)[0]);
    if (gnutls_x509_crt_get_serial((*crts)[0], serial, &size) < 0)
        size = 0;
    /* openssl prints the integer: no leading zero octets. */
    while (i + 1 < size && serial[i] == 0)
        i++;
    for (; i < size && o + 2 < sizeof(c->serial); i++, o += 2)
        snprintf(c->serial + o, 3, "%02X", serial[i]);
    c->serial[o] = '\0';
    return 0;
}

static int
tls_parse_key(const char *path, const char *pem, size_t len,
              gnutls_x509_privkey_t *key, char *err, size_t err_len)
{
    gnutls_datum_t d = {.data = (unsigned char *)pem, .size = (unsigned)len};
    int rc;

    rc = gnutls_x509_privkey_init(key);
    if (rc == 0)
        rc =
            gnutls_x509_privkey_import2(*key, &d, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (rc < 0) {
        snprintf(err, err_len, "'%s': no unencrypted PEM private key (%s)",
                 path, gnutls_strerror(rc));
        return -1;
    }
    return 0;
}

static int
tls_set_client_ca(struct tls_creds *c, const char *path, char *err,
                  size_t err_len)
{
    gnutls_datum_t d;
    size_t len;
    char *pem = file_read(path, FILE_MAX, &len);
    int rc;

    if (pem == NULL) {
        snprintf(err, err_len, "cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    d.data = (unsigned char *)pem;
    d.size = (unsigned)len;
    rc =
        gnutls_certificate_set_x509_trust_mem(c->cred, &d, GNUTLS_X509_FMT_PEM);
    free(pem);
    if (rc <= 0) {
        snprintf(err, err_len, "'%s': no PEM CA certificate (%s)", path,
                 rc < 0 ? gnutls_strerror(rc) : "empty");
        return -1;
    }
    c->client_auth = 1;
    return 0;
}

struct tls_creds *
tls_creds_load(const char *cert_path, const char *key_path,
               const char *client_ca_path, char *err, size_t err_len)
{
    struct tls_creds *c;
    gnutls_x509_crt_t *crts = NULL;
    gnutls_x509_privkey_t key = NULL;
    unsigned int n = 0;
    char *cert_pem = NULL, *key_pem = NULL;
    size_t cert_len = 0, key_len = 0;
    int rc, ok = 0;

    err[0] = '\0';
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    atomic_init(&c->refs, 1);
    cert_pem = file_read(cert_path, FILE_MAX, &cert_len);
    if (cert_pem == NULL) {
        snprintf(err, err_len, "cannot read '%s': %s", cert_path,
                 strerror(errno));
        goto out;
    }
    key_pem = file_read(key_path, FILE_MAX, &key_len);
    if (key_pem == NULL) {
        snprintf(err, err_len, "cannot read '%s': %s", key_path,
                 strerror(errno));
        goto out;
    }
    if (tls_parse_chain(c, cert_path, cert_pem, cert_len, &crts, &n, err,
                        err_len) != 0 ||
        tls_parse_key(key_path, key_pem, key_len, &key, err, err_len) != 0)
        goto out;
    rc = gnutls_certificate_allocate_credentials(&c->cred);
    if (rc < 0) {
        snprintf(err, err_len, "%s", gnutls_strerror(rc));
        goto out;
    }
    /* Copies the chain and the key, and checks that the two match. */
    rc = gnutls_certificate_set_x509_key(c->cred, crts, n, key);
    if (rc == GNUTLS_E_CERTIFICATE_KEY_MISMATCH) {
        snprintf(err, err_len, "'%s' does not match the certificate in '%s'",
                 key_path, cert_path);
        goto out;
    }
    if (rc < 0) {
        snprintf(err, err_len, "'%s' with '%s': %s", cert_path, key_path,
                 gnutls_strerror(rc));
        goto out;
    }
    if (client_ca_path != NULL &&
        tls_set_client_ca(c, client_ca_path, err, err_len) != 0)
        goto out;
    ok = 1;
out:
    for (unsigned int i = 0; i < n; i++)
        gnutls_x509_crt_deinit(crts[i]);
    gnutls_free(crts);
    gnutls_x509_privkey_deinit(key);
    file_free_secret(key_pem, key_len);
    free(cert_pem);
    if (!ok) {
        tls_creds_unref(c);
        return NULL;
    }
    return c;
}

struct tls_creds *
tls_creds_ref(struct tls_creds *c)
{
    if (c != NULL)
        atomic_fetch_add(&c->refs, 1);
    return c;
}

void
tls_creds_unref(struct tls_creds *c)
{
    if (c == NULL || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    if (c->cred != NULL)
        gnutls_certificate_free_credentials(c->cred);
    free(c);
}

int
tls_creds_apply(const struct tls_creds *c, gnutls_session_t session)
{
    /* What the apiserver's client certificate is for: TLS client auth. */
    static const gnutls_typed_vdata_st client_use = {
        .type = GNUTLS_DT_KEY_PURPOSE_OID,
        .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT,
    };

    /* Replaces the daemon's (certificate-less) credentials. */
    if (gnutls_credentials_set(session, GNUTLS_CRD_CERTIFICATE, c->cred) < 0)
        return -1;
    if (c->client_auth) {
        /*
         * REQUIRE fails a handshake without a certificate; verifying in
         * the handshake fails one that does not chain to the CA.
         */
        gnutls_certificate_server_set_request(session, GNUTLS_CERT_REQUIRE);
        gnutls_session_set_verify_cert2(
            session, (gnutls_typed_vdata_st *)&client_use, 1, 0);
    }
    return 0;
}

int64_t
tls_creds_not_after(const struct tls_creds *c)
{
    return c->not_after;
}

const char *
tls_creds_serial(const struct tls_creds *c)
{
    return c->serial;
}

int
tls_no_certificate(gnutls_session_t session, const gnutls_datum_t *req_ca,
                   int nreqs, const gnutls_pk_algorithm_t *pk_algos,
                   int pk_algos_length, gnutls_pcert_st **pcert,
                   unsigned int *pcert_length, gnutls_privkey_t *privkey)
{
    (void)session;
    (void)req_ca;
    (void)nreqs;
    (void)pk_algos;
    (void)pk_algos_length;
    *pcert = NULL;
    *pcert_length = 0;
    *privkey = NULL;
    log_warnx("a TLS session had no credentials: handshake refused");
    return -1;
}
