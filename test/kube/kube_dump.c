/*
 * kube_dump.c - kube/kube.c's callbacks as JSON lines, for
 * test/kube/run.sh.
 *
 *   kube_dump --kubeconfig FILE   watch what serve watches
 *   kube_dump --in-cluster          (kuberesources.c) until SIGTERM or
 *                                   SIGINT
 *   kube_dump --config (--kubeconfig FILE | --in-cluster)
 *                                 print the loaded config and exit
 *
 * One line per callback, flushed: {"cb":"replace","res":"nodes",
 * "names":[...],"kind":K} for a whole list (its items are gathered by
 * name as they come; a list that fails part way prints nothing),
 * {"cb":"event",...,"type":"ADDED","name":..,"kind":K,"rv":..} (K: the
 * kind serve gives the resource's objects, kube_resource_kind()),
 * {"cb":"restart",...,"reason":..}, {"cb":"state",...,"synced":..,
 * "why":..}, {"cb":"tick"} for the first tick only, {"cb":"stopped"}.
 * A config error prints {"error": "..."} and exits 1.
 *
 * Tests only: KUBE_DUMP_BACKOFF_MS, KUBE_DUMP_STALL_S and
 * KUBE_DUMP_REDISCOVER_S set the config's test_* fields (kube.h).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "kube/kube.h"
#include "clusterview/kuberesources.h"
#include "lib/log.h"


static int ticks;

static void
emit(cJSON *line)
{
    char *s = cJSON_PrintUnformatted(line);

    if (s != NULL) {
        printf("%s\n", s);
        fflush(stdout);
    }
    free(s);
    cJSON_Delete(line);
}

static cJSON *
line_new(const char *cb, const struct kube_resource *r)
{
    cJSON *l = cJSON_CreateObject();

    cJSON_AddStringToObject(l, "cb", cb);
    if (r != NULL)
        cJSON_AddStringToObject(l, "res", r->name);
    return l;
}

static const char *
name_of(const cJSON *obj)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(md, "name");

    return cJSON_IsString(n) ? n->valuestring : "?";
}

/* The kind serve files a resource's objects under (kuberesources.c),
 * for check.py to hold against the kind the API gives them. */
static void
add_kind(cJSON *l, const struct kube_resource *r)
{
    const char *kind = kube_resource_kind(r->name);

    cJSON_AddStringToObject(l, "kind", kind ? kind : "?");
}

/* The names of a list's items so far, by resource: a list is handed
 * over an item at a time, and printed as one line when whole. */
#define PENDING_MAX 16
static cJSON *pending[PENDING_MAX];

static void
on_item(void *ctx, const struct kube_resource *r, const cJSON *obj)
{
    int i = kube_resource_index(r->name);

    (void)ctx;
    if (i < 0 || i >= PENDING_MAX)
        return;
    if (pending[i] == NULL)
        pending[i] = cJSON_CreateArray();
    cJSON_AddItemToArray(pending[i], cJSON_CreateString(name_of(obj)));
}

static void
on_listed(void *ctx, const struct kube_resource *r, bool whole)
{
    int i = kube_resource_index(r->name);
    cJSON *names;

    (void)ctx;
    if (i < 0 || i >= PENDING_MAX)
        return;
    names = pending[i] ? pending[i] : cJSON_CreateArray();
    pending[i] = NULL;
    if (!whole) {
        cJSON_Delete(names);
        return;
    }
    cJSON *l = line_new("replace", r);
    cJSON_AddItemToObject(l, "names", names);
    add_kind(l, r);
    emit(l);
}

static void
on_event(void *ctx, const struct kube_resource *r, const char *type,
         const cJSON *obj)
{
    cJSON *l = line_new("event", r);
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(md, "labels");

    (void)ctx;
    cJSON_AddStringToObject(l, "type", type);
    cJSON_AddStringToObject(l, "name", name_of(obj));
    add_kind(l, r);
    cJSON_AddStringToObject(l, "rv",
                            cJSON_IsString(rv) ? rv->valuestring : "?");
    /* The size of the object, so a test can see a big one arrive whole. */
    if (labels != NULL)
        cJSON_AddNumberToObject(l, "labels", cJSON_GetArraySize(labels));
    emit(l);
}

static void
on_restart(void *ctx, const struct kube_resource *r, const char *reason)
{
    cJSON *l = line_new("restart", r);

    (void)ctx;
    cJSON_AddStringToObject(l, "reason", reason);
    emit(l);
}

static void
on_state(void *ctx, const struct kube_resource *r, bool synced, const char *why)
{
    cJSON *l = line_new("state", r);

    (void)ctx;
    cJSON_AddBoolToObject(l, "synced", synced);
    if (why != NULL)
        cJSON_AddStringToObject(l, "why", why);
    else
        cJSON_AddNullToObject(l, "why");
    emit(l);
}

static void
on_tick(void *ctx)
{
    (void)ctx;
    if (ticks++ == 0)
        emit(line_new("tick", NULL));
}

static unsigned
env_unsigned(const char *name)
{
    const char *v = getenv(name);

    return v != NULL ? (unsigned)strtoul(v, NULL, 10) : 0;
}

static void
print_config(const struct kube_config *c)
{
    cJSON *l = cJSON_CreateObject();
    const char *keys[] = {"server",   "ca_file",  "ca_pem",  "cert_file",
                          "cert_pem", "key_file", "key_pem", "token_file",
                          "token",    "origin"};
    const char *vals[] = {c->server,   c->ca_file,  c->ca_pem,  c->cert_file,
                          c->cert_pem, c->key_file, c->key_pem, c->token_file,
                          c->token,    c->origin};

    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
        if (vals[i] == NULL)
            cJSON_AddNullToObject(l, keys[i]);
        else
            cJSON_AddStringToObject(l, keys[i], vals[i]);
    }
    emit(l);
}

struct options {
    const char *kubeconfig;
    bool in_cluster, config_only;
};

/* 0, or 2 after saying what is wrong. */
static int
parse_options(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof(*o));
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--kubeconfig") == 0 && i + 1 < argc) {
            o->kubeconfig = argv[++i];
        } else if (strcmp(argv[i], "--in-cluster") == 0) {
            o->in_cluster = true;
        } else if (strcmp(argv[i], "--config") == 0) {
            o->config_only = true;
        } else {
            fprintf(stderr, "usage: kube_dump [--config] "
                            "(--kubeconfig FILE | --in-cluster)\n");
            return 2;
        }
    }
    if ((o->kubeconfig == NULL) == !o->in_cluster) {
        fprintf(stderr, "kube_dump: one of --kubeconfig or --in-cluster\n");
        return 2;
    }
    return 0;
}

/* Watches what serve watches, one line per callback, until a signal. */
static int
watch_until_signal(struct kube_config *cfg)
{
    static const struct kube_sink sink = {
        .item = on_item,
        .listed = on_listed,
        .event = on_event,
        .restart = on_restart,
        .state = on_state,
        .tick = on_tick,
    };
    const struct kube_resource *resources;
    struct kube_watch *w;
    size_t n_resources;
    char err[512];
    sigset_t set;
    int sig;

    cfg->test_backoff_ms = env_unsigned("KUBE_DUMP_BACKOFF_MS");
    cfg->test_stall_s = env_unsigned("KUBE_DUMP_STALL_S");
    cfg->test_rediscover_s = env_unsigned("KUBE_DUMP_REDISCOVER_S");
    /* Blocked here, so the watch thread inherits the mask and this
     * thread alone takes the signal, in sigwait(). */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    resources = kube_resources(&n_resources);
    w = kube_watch_start(cfg, resources, n_resources, &sink, err,
                         sizeof(err));
    if (w == NULL) {
        fprintf(stderr, "kube_dump: %s\n", err);
        return 1;
    }
    sigwait(&set, &sig);
    kube_watch_stop(w);
    for (size_t i = 0; i < PENDING_MAX; i++)
        cJSON_Delete(pending[i]);
    emit(line_new("stopped", NULL));
    return 0;
}

int
main(int argc, char **argv)
{
    struct options o;
    struct kube_config cfg;
    char err[512];
    int rc;

    log_init("kube_dump");
    log_setverbose(getenv("KUBE_DUMP_VERBOSE") != NULL);
    if ((rc = parse_options(argc, argv, &o)) != 0)
        return rc;
    rc = o.in_cluster ? kube_config_in_cluster(&cfg, err, sizeof(err))
                      : kube_config_load(o.kubeconfig, &cfg, err, sizeof(err));
    if (rc != 0) {
        cJSON *l = cJSON_CreateObject();

        cJSON_AddStringToObject(l, "error", err);
        emit(l);
        return 1;
    }
    if (o.config_only)
        print_config(&cfg);
    else
        rc = watch_until_signal(&cfg);
    kube_config_free(&cfg);
    return rc;
}
