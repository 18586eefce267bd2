/*
 * tls.h - the serving certificate, its key and the optional client CA,
 * as GnuTLS credentials that new TLS sessions are given at connect.
 *
 * GnuTLS because it is the TLS library libmicrohttpd already links and
 * runs every handshake with: handing a session its credentials ourselves
 * is what lets a reload change the certificate without a restart.
 *
 * A struct tls_creds is immutable once loaded and reference counted:
 * the server holds one for new connections, and every connection holds
 * the one its handshake used until it closes. The last unref frees it.
 */
#ifndef TOPOGATE_TLS_H
#define TOPOGATE_TLS_H

#include <stddef.h>
#include <stdint.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

struct tls_creds;

/*
 * Reads and checks cert_path (a PEM chain, the serving certificate
 * first), key_path (its unencrypted PEM key) and, when not NULL,
 * client_ca_path (PEM CA certificates that client certificates must
 * chain to). Returns one reference, or NULL with a one-line reason in
 * err naming the file: unreadable, not PEM, or a key that does not
 * match the certificate.
 */
struct tls_creds *tls_creds_load(const char *cert_path, const char *key_path,
                                 const char *client_ca_path, char *err,
                                 size_t err_len);

struct tls_creds *tls_creds_ref(struct tls_creds *c);
/* NULL is a no-op. */
void tls_creds_unref(struct tls_creds *c);

/*
 * Gives session (a gnutls_session_t not yet in its handshake) these
 * credentials; with a client CA, the handshake then requires a client
 * certificate that chains to it and is fit for TLS client use, and
 * fails otherwise. 0, or -1 when GnuTLS refused.
 */
int tls_creds_apply(const struct tls_creds *c, gnutls_session_t session);

/* notAfter of the serving certificate, in Unix seconds. */
int64_t tls_creds_not_after(const struct tls_creds *c);

/* The serving certificate's serial in upper-case hex, as openssl prints. */
const char *tls_creds_serial(const struct tls_creds *c);

/*
 * A gnutls_certificate_retrieve_function2 that offers no certificate.
 * libmicrohttpd needs a certificate source to start; sessions get theirs
 * from tls_creds_apply(), so this only ever answers a session that did
 * not, and that handshake fails.
 */
int tls_no_certificate(gnutls_session_t session, const gnutls_datum_t *req_ca,
                       int nreqs, const gnutls_pk_algorithm_t *pk_algos,
                       int pk_algos_length, gnutls_pcert_st **pcert,
                       unsigned int *pcert_length, gnutls_privkey_t *privkey);

#endif
