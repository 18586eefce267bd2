/*
 * serve.c - `topogate serve`: load the policy and the certificate, listen
 * for reviews and probes, reload changed files, and stop cleanly on
 * SIGTERM or SIGINT.
 */
#include "cmd/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "policy/table/snapshot.h"
#include "policy/view/view.h"
#include "lib/cpus.h"
#include "clusterview/kubewatch.h"
#include "clusterview/liveaudit.h"
#include "lib/log.h"
#include "webhook/metrics.h"
#include "webhook/probe.h"
#include "webhook/reload.h"
#include "webhook/server.h"
#include "webhook/tls.h"

/*
 * How long SIGTERM waits for requests already begun. Well inside the
 * kubelet's 30 s grace period, and a review takes milliseconds.
 */
#define SERVE_GRACE_MS 5000

/*
 * How often the reload thread looks at the policy and TLS files. A
 * change is acted on once it has held for one poll: 1-2 s after the
 * kubelet swaps the files, against its own sync period of about a minute.
 */
#define SERVE_RELOAD_MS 1000

static const char serve_usage[] =
    "usage: topogate serve [-nv] --tls-cert FILE --tls-key FILE\n"
    "                      [--listen ADDR:PORT] [--probe-listen ADDR:PORT]\n"
    "                      [--policy FILE] [--mode enforce|warn|audit]\n"
    "                      [--client-ca FILE] [--repack]\n"
    "                      [--kubeconfig FILE | --nodes FILE | "
    "--no-cluster-view]\n"
    "                      [--live-audit]\n"
    "\n"
    "  --listen ADDR:PORT        admission HTTPS (default :8443, every "
    "address)\n"
    "  --probe-listen ADDR:PORT  /healthz /readyz /metrics over HTTP "
    "(default :8080)\n"
    "  --tls-cert FILE           serving certificate chain, PEM\n"
    "  --tls-key FILE            its private key, PEM, unencrypted\n"
    "  --client-ca FILE          require client certificates signed by "
    "these CAs\n"
    "  --policy FILE             policy YAML (default: the embedded one)\n"
    "  --mode MODE               force enforce, warn or audit everywhere\n"
    "  --repack                  repack fragmented jobs (policy jobs.repack)\n"
    "  --kubeconfig FILE         learn the cluster's nodes, Kueue queues and\n"
    "                            Trainer runtimes with this kubeconfig (in a\n"
    "                            pod: the service account, without this flag)\n"
    "  --nodes FILE              a fixed view instead, from `kubectl get\n"
    "                            nodes,resourceflavors,clusterqueues,\n"
    "                            localqueues -A -o yaml` (tests, air gaps)\n"
    "  --no-cluster-view         decide from what pods pin alone\n"
    "  --live-audit              also judge the running GPU pods of training\n"
    "                            workloads: PolicyReports, gauges, Events\n"
    "                            (needs the cluster view from the apiserver)\n"
    "  -n                        check the configuration, print "
    "'configuration OK'\n"
    "  -v                        debug logging\n"
    "ADDR is an IPv4 address, a host name, [IPv6], or empty.\n"
    "Changed --policy, --tls-cert, --tls-key and --client-ca files are\n"
    "reloaded within seconds; a file that does not load keeps the old one.\n";

struct serve_opts {
    const char *listen;
    const char *probe_listen;
    const char *cert_path;
    const char *key_path;
    const char *client_ca_path;
    const char *policy;
    const char *mode;
    bool repack;
    const char *kubeconfig;
    const char *nodes;
    bool no_cluster_view;
    bool live_audit;
    bool check;
    bool verbose;
};

/* A resolved listen address, and how to print it. */
struct serve_addr {
    struct sockaddr_storage ss;
    socklen_t len;
    char text[INET6_ADDRSTRLEN + 16];
};

static void __attribute__((format(printf, 1, 2)))
serve_error(const char *fmt, ...)
{
    va_list ap;

    fputs("topogate serve: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/*
 * Resolves "ADDR:PORT", "[IPv6]:PORT" or ":PORT". An empty ADDR means
 * every address: "::" serving IPv4 as well, or "0.0.0.0" where the
 * kernel has no IPv6. 0, or -1 after printing why.
 */
static int
serve_resolve(const char *opt, const char *spec, struct serve_addr *out)
{
    struct addrinfo hints, *res = NULL;
    char host[256], serv[NI_MAXSERV];
    const char *arg = spec, *port, *end;
    size_t n;
    int rc;

    if (spec[0] == '[') {
        end = strchr(spec, ']');
        if (end == NULL || end[1] != ':')
            goto syntax;
        n = (size_t)(end - spec - 1);
        spec++;
        port = end + 2;
    } else {
        end = strrchr(spec, ':');
        if (end == NULL || memchr(spec, ':', (size_t)(end - spec)) != NULL)
            goto syntax;
        n = (size_t)(end - spec);
        port = end + 1;
    }
    if (n >= sizeof(host) || port[0] == '\0' ||
        strspn(port, "0123456789") != strlen(port) || atol(port) < 1 ||
        atol(port) > 65535)
        goto syntax;
    memcpy(host, spec, n);
    host[n] = '\0';

    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    if (host[0] == '\0') {
        int fd = socket(AF_INET6, SOCK_STREAM, 0);

        hints.ai_family = fd >= 0 ? AF_INET6 : AF_INET;
        hints.ai_flags |= AI_PASSIVE;
        if (fd >= 0)
            close(fd);
    }
    rc = getaddrinfo(host[0] != '\0' ? host : NULL, port, &hints, &res);
    if (rc != 0) {
        serve_error("%s '%s': %s", opt, arg, gai_strerror(rc));
        return -1;
    }
    memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
    out->len = res->ai_addrlen;
    freeaddrinfo(res);
    getnameinfo((struct sockaddr *)&out->ss, out->len, host, sizeof(host), serv,
                sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV);
    snprintf(out->text, sizeof(out->text),
             out->ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, serv);
    return 0;
syntax:
    serve_error("%s '%s': expected ADDR:PORT, [IPv6]:PORT or :PORT", opt, arg);
    return -1;
}

/* 0, 1 for a usage error (already printed), or 2 for --help. */
static int
serve_options(int argc, char **argv, struct serve_opts *o)
{
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"probe-listen", required_argument, NULL, 'p'},
        {"tls-cert", required_argument, NULL, 'c'},
        {"tls-key", required_argument, NULL, 'k'},
        {"client-ca", required_argument, NULL, 'a'},
        {"policy", required_argument, NULL, 'f'},
        {"mode", required_argument, NULL, 'm'},
        {"repack", no_argument, NULL, 'r'},
        {"kubeconfig", required_argument, NULL, 'K'},
        {"no-cluster-view", no_argument, NULL, 'V'},
        {"nodes", required_argument, NULL, 'N'},
        {"live-audit", no_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;

    /* glibc: 0 restarts the scan completely, whatever main() parsed. */
    optind = 0;
    while ((ch = getopt_long(argc, argv, "+nvh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'l':
            o->listen = optarg;
            break;
        case 'p':
            o->probe_listen = optarg;
            break;
        case 'c':
            o->cert_path = optarg;
            break;
        case 'k':
            o->key_path = optarg;
            break;
        case 'a':
            o->client_ca_path = optarg;
            break;
        case 'f':
            o->policy = optarg;
            break;
        case 'm':
            o->mode = optarg;
            break;
        case 'r':
            o->repack = true;
            break;
        case 'K':
            o->kubeconfig = optarg;
            break;
        case 'V':
            o->no_cluster_view = true;
            break;
        case 'N':
            o->nodes = optarg;
            break;
        case 'L':
            o->live_audit = true;
            break;
        case 'n':
            o->check = true;
            break;
        case 'v':
            o->verbose = true;
            break;
        case 'h':
            fputs(serve_usage, stdout);
            return 2;
        default:
            fputs(serve_usage, stderr);
            return 1;
        }
    }
    if (optind < argc) {
        serve_error("unexpected argument '%s'", argv[optind]);
        return 1;
    }
    if ((o->kubeconfig != NULL) + (o->nodes != NULL) + o->no_cluster_view >
        1) {
        serve_error("--kubeconfig, --nodes and --no-cluster-view exclude "
                    "each other");
        return 1;
    }
    if (o->live_audit && (o->nodes != NULL || o->no_cluster_view)) {
        serve_error("--live-audit watches the apiserver: not with %s",
                    o->nodes ? "--nodes" : "--no-cluster-view");
        return 1;
    }
    if (o->cert_path == NULL || o->key_path == NULL) {
        serve_error("missing %s%s%s",
                    o->cert_path == NULL ? "--tls-cert FILE" : "",
                    o->cert_path == NULL && o->key_path == NULL ? " and " : "",
                    o->key_path == NULL ? "--tls-key FILE" : "");
        return 1;
    }
    return 0;
}

/*
 * Starts the cluster view: with --kubeconfig, or in a pod. A kubeconfig
 * that does not load is a mistake to stop on; a pod without a token
 * (the chart's clusterView.enabled: false) serves without a view. -1
 * only after printing why.
 */
static int
serve_cluster_view(const struct serve_opts *o, struct server *srv,
                   struct metrics *m, struct kubewatch **out)
{
    char err[512];

    *out = NULL;
    if (o->nodes) {
        struct view_index *x = view_index_new();
        struct view *v = NULL;
        if (x == NULL || cmd_view_read(x, o->nodes) < 0 ||
            (v = view_build(x)) == NULL) {
            serve_error("--nodes %s: cannot read a view from it", o->nodes);
            view_index_free(x);
            return -1;
        }
        server_set_view(srv, v);
        metrics_set_view(m, v->n_nodes, v->n_kinds, true, (int64_t)time(NULL));
        log_info("cluster view: %zu GPU nodes of %zu kinds from %s, fixed",
                 v->n_nodes, v->n_kinds, o->nodes);
        view_unref(v);
        view_index_free(x);
        return 0;
    }
    if (o->no_cluster_view) {
        log_info("cluster view: off (--no-cluster-view)");
        return 0;
    }
    if (o->kubeconfig == NULL && getenv("KUBERNETES_SERVICE_HOST") == NULL) {
        log_info("cluster view: off (not in a cluster, no --kubeconfig)%s",
                 o->live_audit ? "; so is the live audit" : "");
        return 0;
    }
    if (o->live_audit) {
        struct liveaudit *la = liveaudit_new(srv, m);
        if (la == NULL) {
            serve_error("out of memory");
            return -1;
        }
        *out = kubewatch_start_live(o->kubeconfig, srv, m, la, err,
                                    sizeof(err));
        if (*out != NULL)
            log_info("live audit: on: judging the running GPU pods of "
                     "training workloads");
    } else {
        *out = kubewatch_start(o->kubeconfig, srv, m, err, sizeof(err));
    }
    if (*out != NULL)
        return 0;
    if (o->kubeconfig) {
        serve_error("%s", err);
        return -1;
    }
    log_warnx("cluster view: off: %s; decisions fall back to what pods pin",
              err);
    return 0;
}

/* Serves until SIGTERM or SIGINT. 0, or 1 when a listener cannot start. */
static int
serve_run(const struct serve_opts *o, const struct snapshot_opts *opts,
          struct snapshot *s,
          const struct serve_addr *admission, const struct serve_addr *probe,
          struct tls_creds *creds)
{
    struct metrics *metrics = NULL;
    struct server *srv = NULL;
    struct probe *prb = NULL;
    struct reload *rld = NULL;
    struct kubewatch *view = NULL;
    char err[512];
    sigset_t set;
    struct server_config cfg = {
        .addr = (const struct sockaddr *)&admission->ss,
        .creds = creds,
        .threads = cpus_usable(),
    };
    struct reload_config rcfg = {
        .policy_path = o->policy,
        .policy_digest = s->digest,
        .opts = *opts,
        .cert_path = o->cert_path,
        .key_path = o->key_path,
        .client_ca_path = o->client_ca_path,
        .serial = tls_creds_serial(creds),
        .interval_ms = SERVE_RELOAD_MS,
    };
    int sig, ret = 1;

    /*
     * Blocked before any thread starts, so every thread inherits the mask
     * and only sigwait() below ever sees these signals.
     */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* Review lines go through a queue and a writer thread from here. */
    if (log_start() < 0)
        log_warn("log: no writer thread, lines are written at once");

    metrics = metrics_new();
    if (metrics == NULL) {
        serve_error("out of memory");
        goto out;
    }
    metrics_set_certificate(metrics, tls_creds_not_after(creds));
    srv = server_start(&cfg, s, metrics, err, sizeof(err));
    if (srv == NULL) {
        serve_error("cannot listen on %s: %s", admission->text, err);
        goto out;
    }
    prb = probe_start((const struct sockaddr *)&probe->ss, metrics, err,
                      sizeof(err));
    if (prb == NULL) {
        serve_error("cannot listen on %s: %s", probe->text, err);
        goto out;
    }
    rld = reload_start(&rcfg, srv, metrics, err, sizeof(err));
    if (rld == NULL) {
        serve_error("%s", err);
        goto out;
    }
    if (serve_cluster_view(o, srv, metrics, &view) < 0)
        goto out;
    /* Ready at once: a view that is late or away only means decisions
     * fall back to pins, never refused pods. */
    probe_set_ready(prb, true);
    log_info("policy %s digest %016llx mode %s, %zu instance types", s->origin,
             (unsigned long long)s->digest, mode_name(s->mode), s->n_types);
    log_info("certificate serial %s%s", tls_creds_serial(creds),
             o->client_ca_path != NULL ? ", client certificates required" : "");
    log_info("serving https://%s/mutate with %u threads, probes on "
             "http://%s",
             admission->text, cfg.threads, probe->text);

    if (sigwait(&set, &sig) != 0)
        goto out;
    log_info("%s: draining, then stopping",
             sig == SIGTERM ? "SIGTERM" : "SIGINT");
    /* Not ready first, so the endpoint is dropped while requests drain. */
    probe_set_ready(prb, false);
    reload_stop(rld);
    rld = NULL;
    kubewatch_stop(view);
    view = NULL;
    server_stop(srv, SERVE_GRACE_MS);
    srv = NULL;
    ret = 0;
out:
    reload_stop(rld);
    kubewatch_stop(view);
    server_stop(srv, 0);
    probe_stop(prb);
    metrics_free(metrics);
    if (ret == 0)
        log_info("stopped");
    log_stop(); /* every queued line is written before we return */
    return ret;
}

int
cmd_serve(int argc, char **argv)
{
    struct serve_opts o = {.listen = ":8443", .probe_listen = ":8080"};
    struct serve_addr admission, probe;
    struct snapshot_opts opts;
    struct snapshot *s = NULL;
    struct tls_creds *creds = NULL;
    char err[512];
    int ret = 1;

    log_init("topogate");
    switch (serve_options(argc, argv, &o)) {
    case 0:
        break;
    case 2:
        return 0; /* --help */
    default:
        return 1;
    }
    log_setverbose(o.verbose);
    if (serve_resolve("--listen", o.listen, &admission) != 0 ||
        serve_resolve("--probe-listen", o.probe_listen, &probe) != 0)
        goto out;
    if (cmd_policy_opts(o.mode, o.repack, &opts) < 0 ||
        (s = cmd_load_policy(o.policy, &opts)) == NULL)
        goto out;
    creds = tls_creds_load(o.cert_path, o.key_path, o.client_ca_path, err,
                           sizeof(err));
    if (creds == NULL) {
        serve_error("%s", err);
        goto out;
    }
    if (o.check && o.kubeconfig &&
        kubewatch_check(o.kubeconfig, err, sizeof(err)) < 0) {
        serve_error("%s", err);
        goto out;
    }
    if (o.check) {
        puts("configuration OK");
        ret = 0;
        goto out;
    }
    ret = serve_run(&o, &opts, s, &admission, &probe, creds);
out:
    tls_creds_unref(creds);
    snapshot_unref(s);
    return ret;
}
