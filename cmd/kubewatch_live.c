/*
 * kubewatch_live.c - topogate-kubewatch --live-audit: what serve asks
 * the helper to write, one JSON line each on its stdin, done in order on
 * a thread of its own, each answered on stdout:
 *   {"op":"report","ns":NS,"body":R}   server-side apply of R as the
 *                                      PolicyReport "topogate" of NS
 *   {"op":"unreport","ns":NS}          delete that report
 *   {"op":"event","ns":NS,"body":E}    create the core v1 Event E in NS
 *   {"op":"unevent","ns":NS,"name":N}  delete the Event N of NS
 *   -> {"op":"wrote","what":OP,"ns":NS,"name":N,"code":C,"why":W}
 * The helper builds every path itself, from names it checks, and sets
 * the report's apiVersion, kind, name, namespace and managed-by label:
 * serve chooses what a report or an Event says, never what else is
 * written (RBAC bounds the rest: operating.md).
 */
#include "cmd/kubewatch_live.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterview/liveresources.h"
#include "kube/kubewrite.h"
#include "lib/log.h"

/* A report of a few thousand workloads is under a MiB. */
#define COMMAND_MAX (8u << 20)

static struct kube_writer *writer;
static void (*reply)(cJSON *line);

/* A DNS-1123 label (a namespace) or, dots allowed, subdomain (an
 * Event's name): the apiserver's own rules, so no path is ours to make
 * of anything else. */
static bool
dns_name(const char *s, bool dots)
{
    size_t n = s ? strlen(s) : 0;

    if (n == 0 || n > (dots ? 253u : 63u))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
              (dots && c == '.')))
            return false;
    }
    return s[0] != '-' && s[n - 1] != '-' && s[0] != '.' && s[n - 1] != '.';
}

static void
answer(const char *what, const char *ns, const char *name, long code,
       const char *why)
{
    cJSON *l = cJSON_CreateObject();

    cJSON_AddStringToObject(l, "op", "wrote");
    cJSON_AddStringToObject(l, "what", what);
    cJSON_AddStringToObject(l, "ns", ns ? ns : "");
    cJSON_AddStringToObject(l, "name", name ? name : "");
    cJSON_AddNumberToObject(l, "code", (double)code);
    cJSON_AddStringToObject(l, "why", why ? why : "");
    reply(l);
}

static void
set_str(cJSON *o, const char *key, const char *v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    cJSON_AddStringToObject(o, key, v);
}

/* One command; its answer. */
static void
command(const cJSON *c)
{
    const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(c, "op"));
    const char *ns = cJSON_GetStringValue(cJSON_GetObjectItem(c, "ns"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
    cJSON *body = cJSON_GetObjectItem(c, "body"), *meta, *labels;
    char path[512], msg[256];
    char *text = NULL;
    const char *method;
    long code;

    if (op == NULL || !dns_name(ns, false)) {
        answer(op ? op : "?", ns, name, 0, "not a command: bad op or ns");
        return;
    }
    if (strcmp(op, "report") == 0 || strcmp(op, "unreport") == 0) {
        snprintf(path, sizeof(path),
                 "/apis/%s/%s/namespaces/%s/policyreports/%s%s",
                 LIVE_REPORT_GROUP, LIVE_REPORT_VERSION, ns, LIVE_REPORT_NAME,
                 op[0] == 'r' ? "?fieldManager=topogate&force=true" : "");
        method = op[0] == 'r' ? "PATCH" : "DELETE";
        name = LIVE_REPORT_NAME;
    } else if (strcmp(op, "event") == 0) {
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", ns);
        method = "POST";
    } else if (strcmp(op, "unevent") == 0 && dns_name(name, true)) {
        snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events/%s", ns,
                 name);
        method = "DELETE";
    } else {
        answer(op, ns, name, 0, "not a command");
        return;
    }
    if (strcmp(method, "DELETE") != 0) {
        if (!cJSON_IsObject(body)) {
            answer(op, ns, name, 0, "no body");
            return;
        }
        meta = cJSON_GetObjectItemCaseSensitive(body, "metadata");
        if (!cJSON_IsObject(meta))
            meta = cJSON_AddObjectToObject(body, "metadata");
        set_str(meta, "namespace", ns);
        if (op[0] == 'r') {
            set_str(body, "apiVersion",
                    LIVE_REPORT_GROUP "/" LIVE_REPORT_VERSION);
            set_str(body, "kind", "PolicyReport");
            set_str(meta, "name", LIVE_REPORT_NAME);
            labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
            if (!cJSON_IsObject(labels))
                labels = cJSON_AddObjectToObject(meta, "labels");
            set_str(labels, LIVE_MANAGED_BY, "topogate");
        } else {
            name = cJSON_GetStringValue(cJSON_GetObjectItem(meta, "name"));
            if (!dns_name(name, true)) {
                answer(op, ns, name, 0, "an Event needs a name");
                return;
            }
            set_str(body, "apiVersion", "v1");
            set_str(body, "kind", "Event");
        }
        if ((text = cJSON_PrintUnformatted(body)) == NULL) {
            answer(op, ns, name, 0, "out of memory");
            return;
        }
    }
    code = kube_writer_do(writer, method, path, text, msg, sizeof(msg));
    free(text);
    if (code == 0 || code >= 300)
        log_warnx("live audit: %s %s: %ld %s", method, path, code, msg);
    answer(op, ns, name, code, msg);
}

static void *
command_thread(void *arg)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;

    (void)arg;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        cJSON *c;
        if ((size_t)n > COMMAND_MAX) {
            answer("?", "", "", 0, "command too large");
            continue;
        }
        if ((c = cJSON_ParseWithLength(line, (size_t)n)) == NULL) {
            answer("?", "", "", 0, "not JSON");
            continue;
        }
        command(c);
        cJSON_Delete(c);
    }
    free(line);
    return NULL; /* serve closed our stdin */
}

int
kubewatch_live_start(const struct kube_config *cfg, void (*out)(cJSON *),
                     char *err, size_t err_len)
{
    pthread_t t;

    reply = out;
    if ((writer = kube_writer_new(cfg, err, err_len)) == NULL)
        return -1;
    if (pthread_create(&t, NULL, command_thread, NULL) != 0) {
        snprintf(err, err_len, "cannot start the command thread");
        return -1;
    }
    pthread_detach(t);
    return 0;
}
