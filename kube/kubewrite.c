/* kubewrite.c - see kubewrite.h. */
#include "kube/kubewrite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "base/strbuf.h"
#include "kube/kubeconfig.h"
#include "kube/kubereq.h"
#include "lib/file.h"

/* A failure's body: its Status message is all we read. */
#define WRITE_BODY_MAX (64u << 10)
#define TOKEN_MAX 65536
#define TOKEN_REREAD_S 60

struct kube_writer {
    struct kube_config cfg;
    char *tmpdir;
    char *token; /* read from cfg.token_file */
    time_t token_read;
};

static int
dup_str(char **dst, const char *src)
{
    return src == NULL || (*dst = strdup(src)) != NULL ? 0 : -1;
}

struct kube_writer *
kube_writer_new(const struct kube_config *c, char *err, size_t err_len)
{
    struct kube_writer *w = calloc(1, sizeof(*w));
    struct kube_config *d;

    if (w == NULL)
        goto oom;
    d = &w->cfg;
    if (dup_str(&d->server, c->server) || dup_str(&d->ca_file, c->ca_file) ||
        dup_str(&d->cert_file, c->cert_file) ||
        dup_str(&d->key_file, c->key_file) ||
        dup_str(&d->token_file, c->token_file) || dup_str(&d->token, c->token))
        goto oom;
    d->ca_pem = c->ca_pem;
    d->cert_pem = c->cert_pem;
    d->key_pem = c->key_pem;
    if (kubeconfig_pem_files(d, &w->tmpdir, err, err_len) != 0) {
        d->ca_pem = d->cert_pem = d->key_pem = NULL;
        kube_writer_free(w);
        return NULL;
    }
    d->ca_pem = d->cert_pem = d->key_pem = NULL;
    return w;
oom:
    snprintf(err, err_len, "out of memory");
    kube_writer_free(w);
    return NULL;
}

void
kube_writer_free(struct kube_writer *w)
{
    if (w == NULL)
        return;
    kubeconfig_pem_remove(w->tmpdir);
    free(w->tmpdir);
    if (w->token != NULL)
        file_free_secret(w->token, strlen(w->token));
    kube_config_free(&w->cfg);
    free(w);
}

static const char *
writer_token(struct kube_writer *w)
{
    time_t now = time(NULL);
    size_t len;
    char *t;

    if (w->cfg.token_file == NULL)
        return w->cfg.token;
    if (w->token == NULL || now - w->token_read >= TOKEN_REREAD_S) {
        if ((t = file_read(w->cfg.token_file, TOKEN_MAX, &len)) != NULL) {
            while (len > 0 && strchr("\r\n\t ", t[len - 1]))
                t[--len] = '\0';
            if (w->token != NULL)
                file_free_secret(w->token, strlen(w->token));
            w->token = t;
        }
        w->token_read = now;
    }
    return w->token;
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
    struct strbuf *b = arg;

    if (b->len + size * n > WRITE_BODY_MAX)
        return 0;
    strbuf_add(b, p, size * n);
    return b->failed ? 0 : size * n;
}

long
kube_writer_do(struct kube_writer *w, const char *method, const char *path,
               const char *body, char *msg, size_t msg_len)
{
    struct kubereq_opts o = {
        .ca_file = w->cfg.ca_file,
        .cert_file = w->cfg.cert_file,
        .key_file = w->cfg.key_file,
        .token = writer_token(w),
    };
    struct curl_slist *hdrs = NULL, *more;
    struct strbuf resp = {0};
    char errbuf[CURL_ERROR_SIZE] = "", *url = NULL;
    long code = 0;
    CURLcode rc;
    CURL *e = NULL;

    msg[0] = '\0';
    if (asprintf(&url, "%s%s", w->cfg.server, path) < 0) {
        snprintf(msg, msg_len, "out of memory");
        return 0;
    }
    o.url = url;
    if ((e = kubereq_new(&o, &hdrs)) == NULL)
        goto oom;
    if (body != NULL) {
        more = curl_slist_append(
            hdrs, strcmp(method, "PATCH") == 0
                      ? "Content-Type: application/apply-patch+yaml"
                      : "Content-Type: application/json");
        if (more == NULL)
            goto oom;
        hdrs = more;
        curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    }
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &resp);
    if ((rc = curl_easy_perform(e)) != CURLE_OK) {
        snprintf(msg, msg_len, "%s",
                 errbuf[0] ? errbuf : curl_easy_strerror(rc));
    } else {
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
        if (code >= 300) {
            cJSON *st =
                cJSON_ParseWithLength(resp.buf ? resp.buf : "", resp.len);
            const char *m = cJSON_GetStringValue(
                cJSON_GetObjectItemCaseSensitive(st, "message"));
            snprintf(msg, msg_len, "%s", m ? m : "no Status in the answer");
            cJSON_Delete(st);
        }
    }
    goto out;
oom:
    snprintf(msg, msg_len, "out of memory");
out:
    curl_easy_cleanup(e);
    curl_slist_free_all(hdrs);
    strbuf_free(&resp);
    free(url);
    return code;
}
