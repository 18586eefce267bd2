/* kubereq.c - apiserver URLs and bounded, verified libcurl handles. */
#include "kube/kubereq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/file.h"

char *
kubereq_discovery_url(const char *server, const char *group)
{
    char *url;

    return asprintf(&url, "%s/apis/%s", server, group) < 0 ? NULL : url;
}

/* SERVER/api/VERSION/PLURAL?QUERY, or /apis/GROUP/VERSION/...; with
 * the target's labelSelector first in the query. */
static char *
kubereq_url(const struct kubereq_target *t, const char *query)
{
    char *url, *sel = NULL;
    const char *pre = "";
    int rc;

    if (t->selector != NULL) {
        if ((sel = curl_easy_escape(NULL, t->selector, 0)) == NULL)
            return NULL;
        pre = "labelSelector=";
    }
    if (*t->group != '\0')
        rc = asprintf(&url, "%s/apis/%s/%s/%s?%s%s%s%s", t->server, t->group,
                      t->version, t->plural, pre, sel ? sel : "",
                      sel ? "&" : "", query);
    else
        rc = asprintf(&url, "%s/api/%s/%s?%s%s%s%s", t->server, t->version,
                      t->plural, pre, sel ? sel : "", sel ? "&" : "", query);
    curl_free(sel);
    return rc < 0 ? NULL : url;
}

char *
kubereq_list_url(const struct kubereq_target *t, int limit, const char *cont,
                 bool rv_unset, const char *at_rv)
{
    char *esc = NULL, *q = NULL, *url = NULL;
    int rc;

    if (cont != NULL) {
        if ((esc = curl_easy_escape(NULL, cont, 0)) == NULL)
            return NULL;
        rc = asprintf(&q, "limit=%d&continue=%s", limit, esc);
    } else if (at_rv != NULL) {
        if ((esc = curl_easy_escape(NULL, at_rv, 0)) == NULL)
            return NULL;
        rc = asprintf(&q, "resourceVersion=%s", esc);
    } else {
        rc = asprintf(&q, "limit=%d%s", limit,
                      rv_unset ? "" : "&resourceVersion=0");
    }
    if (rc >= 0)
        url = kubereq_url(t, q);
    else
        q = NULL;
    curl_free(esc);
    free(q);
    return url;
}

char *
kubereq_watch_url(const struct kubereq_target *t, const char *rv,
                  unsigned timeout_s)
{
    char *esc, *q = NULL, *url = NULL;

    if ((esc = curl_easy_escape(NULL, rv, 0)) == NULL)
        return NULL;
    if (asprintf(&q,
                 "watch=1&resourceVersion=%s&allowWatchBookmarks=true"
                 "&timeoutSeconds=%u",
                 esc, timeout_s) >= 0)
        url = kubereq_url(t, q);
    else
        q = NULL;
    curl_free(esc);
    free(q);
    return url;
}

static struct curl_slist *
kubereq_headers(const char *token)
{
    struct curl_slist *h, *t;
    char *auth;

    if ((h = curl_slist_append(NULL, "Accept: application/json")) == NULL)
        return NULL;
    if ((t = curl_slist_append(h, "User-Agent: topogate/" TOPOGATE_VERSION)) ==
        NULL)
        goto fail;
    h = t;
    if (token == NULL || *token == '\0')
        return h;
    if (asprintf(&auth, "Authorization: Bearer %s", token) < 0)
        goto fail;
    t = curl_slist_append(h, auth);
    file_free_secret(auth, strlen(auth));
    if (t != NULL)
        return t;
fail:
    curl_slist_free_all(h);
    return NULL;
}

CURL *
kubereq_new(const struct kubereq_opts *o, struct curl_slist **hdrs)
{
    CURL *e;

    if ((*hdrs = kubereq_headers(o->token)) == NULL)
        return NULL;
    if ((e = curl_easy_init()) == NULL) {
        curl_slist_free_all(*hdrs);
        *hdrs = NULL;
        return NULL;
    }
    curl_easy_setopt(e, CURLOPT_URL, o->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, *hdrs);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    if (o->ca_file != NULL) {
        /* The cluster's CA alone, as client-go trusts it: without this,
         * Debian's libcurl also reads every CA of /etc/ssl/certs, per
         * handle (25 MiB resident in the helper), and would trust them
         * for the apiserver. NULL disables the path (curl.se
         * CURLOPT_CAPATH). */
        curl_easy_setopt(e, CURLOPT_CAINFO, o->ca_file);
        curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
    }
    if (o->cert_file != NULL) {
        curl_easy_setopt(e, CURLOPT_SSLCERT, o->cert_file);
        curl_easy_setopt(e, CURLOPT_SSLKEY, o->key_file);
    }
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT,
                     (long)KUBEREQ_CONNECT_TIMEOUT_S);
    if (o->watch) {
        curl_easy_setopt(e, CURLOPT_TIMEOUT, o->max_s);
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, o->stall_s);
        curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
    } else {
        curl_easy_setopt(e, CURLOPT_TIMEOUT, (long)KUBEREQ_TIMEOUT_S);
        /* Lists of a few thousand nodes shrink a lot with gzip. */
        curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "gzip");
    }
    return e;
}
