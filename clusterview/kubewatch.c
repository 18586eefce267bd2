/*
 * kubewatch.c - see kubewatch.h.
 *
 * The apiserver client runs in topogate-kubewatch, a process beside the
 * server (cmd/kubewatch_main.c), which writes what it sees as JSON lines
 * on a pipe. One thread here reads them into the view index, which it
 * alone owns, and swaps built views into the server; only the views
 * cross to the request threads, through server_set_view(). A helper that
 * exits is started again with backoff; one that cannot use its
 * configuration (exit 2) is not, and the view stays off. A helper that
 * says nothing for 30 s (it says "tick" every 2 s) is stuck or stopped:
 * the view is no longer in sync, and the helper is killed and started
 * again.
 *
 * Memory follows what is kept, not what is read: a list comes a line per
 * object, into an index of its own that replaces the old one whole when
 * the list is complete (and is dropped when it is not); one line is at
 * most one object. After a list, and when the cluster has shrunk by
 * half, freed memory goes back to the system (malloc_trim).
 */
#include "clusterview/kubewatch.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "policy/view/view.h"
#include "clusterview/kuberesources.h"
#include "clusterview/liveaudit.h"
#include "lib/log.h"
#include "webhook/metrics.h"
#include "webhook/server.h"

extern char **environ;

#define HELPER "topogate-kubewatch"
/* A view is built at most this often, however fast nodes change. */
#define BUILD_INTERVAL_S 1
/* One line is one object, slimmed: a list item is at most 16 MiB as
 * read (kube_internal.h), a watch event 8 MiB; a Kueue object keeps its
 * spec whole. */
#define LINE_MAX_BYTES (24u << 20)
/* A line buffer past this is given back after its line. */
#define LINE_KEEP_BYTES (1u << 20)
/* The helper says "tick" every 2 s; this long without a line, it is
 * stuck or stopped. */
#define SILENT_MS 30000
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 30000
/* A helper that ran this long was healthy: the next failure starts the
 * backoff over. */
#define HEALTHY_S 120
#define RESOURCES_MAX 16

struct kubewatch {
    char *kubeconfig; /* NULL: in cluster */
    struct view_index *index;
    struct server *srv; /* NULL: list once, for `topogate nodes` */
    struct metrics *metrics;
    pthread_t thread;
    bool thread_started;
    int wake[2]; /* written to stop the thread */
    pid_t child;
    int fd; /* the helper's stdout, or -1 */
    time_t child_started;
    char *buf;
    size_t len, cap;
    bool dirty;
    bool synced[RESOURCES_MAX]; /* settled, by kube_resources() index */
    /* A list being read, by resource: replaces its part of index once
     * whole. */
    struct view_index *staging[RESOURCES_MAX];
    uint64_t heard_ms; /* the helper's last line */
    uint64_t silent_ms;
    size_t trimmed_nodes; /* GPU nodes at the last malloc_trim */
    size_t nodes, kinds;  /* of the view last published */
    size_t per_node_logged;
    time_t built;
    bool too_many;
    unsigned backoff_ms;
    bool gave_up; /* the configuration cannot work: no more helpers */
    struct liveaudit *live; /* serve --live-audit, owned; or NULL */
    int cmd_fd;             /* the helper's stdin (live audit), or -1 */
};

/* --- the helper ----------------------------------------------------- */

static int
helper_path(char *path, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", path, len - 1);
    char *slash;

    if (n < 0)
        return -1;
    path[n] = '\0';
    if ((slash = strrchr(path, '/')) == NULL ||
        (size_t)(slash + 1 - path) + sizeof(HELPER) > len)
        return -1;
    memcpy(slash + 1, HELPER, sizeof(HELPER));
    return 0;
}

/* Starts the helper with extra (NULL or "--once" / "--check" /
 * "--live-audit"); its stdout into *fd (NULL: /dev/null), its stdin from
 * *in, non-blocking (NULL: /dev/null). 0, or -1 with the reason in err. */
static int
helper_spawn(const char *kubeconfig, const char *extra, pid_t *pid, int *fd,
             int *in, char *err, size_t err_len)
{
    char path[4096];
    char *argv[5];
    int p[2] = {-1, -1}, q[2] = {-1, -1}, rc, argc = 0;
    posix_spawn_file_actions_t fa;

    if (helper_path(path, sizeof(path)) < 0) {
        snprintf(err, err_len, "cannot place %s beside this program", HELPER);
        return -1;
    }
    argv[argc++] = path;
    if (kubeconfig) {
        argv[argc++] = "--kubeconfig";
        argv[argc++] = (char *)kubeconfig;
    }
    if (extra)
        argv[argc++] = (char *)extra;
    argv[argc] = NULL;
    if (fd && pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, err_len, "pipe: %s", strerror(errno));
        return -1;
    }
    if (in && pipe2(q, O_CLOEXEC) < 0) {
        snprintf(err, err_len, "pipe: %s", strerror(errno));
        if (fd) {
            close(p[0]);
            close(p[1]);
        }
        return -1;
    }
    posix_spawn_file_actions_init(&fa);
    if (in)
        posix_spawn_file_actions_adddup2(&fa, q[0], 0);
    else
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (fd)
        posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    else
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    rc = posix_spawn(pid, path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (fd)
        close(p[1]);
    if (in)
        close(q[0]);
    if (rc != 0) {
        if (in)
            close(q[1]);
        if (fd)
            close(p[0]);
        snprintf(err, err_len, "cannot run '%s': %s", path, strerror(rc));
        return -1;
    }
    if (fd)
        *fd = p[0];
    if (in) {
        fcntl(q[1], F_SETFL, O_NONBLOCK);
        *in = q[1];
    }
    return 0;
}

/* Waits for the helper; its exit status, or -1 when killed. */
static int
helper_reap(pid_t pid)
{
    int status;

    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Asks the helper to stop, then insists after a second. */
static void
helper_stop(pid_t pid)
{
    int status;

    kill(pid, SIGTERM);
    for (int i = 0; i < 100; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return;
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
    kill(pid, SIGKILL);
    helper_reap(pid);
}

/* --- what the helper says ------------------------------------------- */

/* Every resource settled, not only those the helper spoke of so far. */
static bool
all_synced(const struct kubewatch *w)
{
    size_t n;

    kube_resources(&n);
    for (size_t i = 0; i < n && i < RESOURCES_MAX; i++)
        if (!w->synced[i])
            return false;
    return true;
}

static uint64_t now_ms(void);

/* Gives freed memory back to the system (glibc keeps it otherwise). */
static void
trim(struct kubewatch *w, size_t nodes)
{
    malloc_trim(0);
    w->trimmed_nodes = nodes;
}

/* An object of a list: into that resource's list in progress. */
static int
on_item(struct kubewatch *w, int i, const char *kind, const cJSON *obj)
{
    if (w->staging[i] == NULL && (w->staging[i] = view_index_new()) == NULL)
        return -1;
    return strcmp(kind, "Node") == 0
               ? view_index_put_node(w->staging[i], obj)
               : view_index_put_object(w->staging[i], kind, obj);
}

/* The end of a list: whole, it replaces what the index had of it. */
static int
on_listed(struct kubewatch *w, int i, const char *kind, bool whole)
{
    int rc = 0;

    if (whole && w->staging[i] == NULL &&
        (w->staging[i] = view_index_new()) == NULL)
        return -1; /* an empty list */
    if (whole) {
        rc = view_index_take(w->index, kind, w->staging[i]);
        w->dirty = true;
    }
    view_index_free(w->staging[i]); /* the old objects, or the partial list */
    w->staging[i] = NULL;
    trim(w, w->nodes);
    return rc;
}

static void
on_line(struct kubewatch *w, const char *text)
{
    cJSON *l = cJSON_Parse(text);
    const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(l, "op"));
    const char *res = cJSON_GetStringValue(cJSON_GetObjectItem(l, "res"));
    const char *kind = kube_resource_kind(res);
    int rc = 0;

    int ri = res ? kube_resource_index(res) : -1;

    if (w->live && liveaudit_line(w->live, op, res, l)) {
        cJSON_Delete(l);
        return;
    }
    if (op != NULL && strcmp(op, "tick") == 0) {
        /* Alive (heard_ms), and with every resource in sync the view in
         * service is current as of now: its age says so. */
        if (w->metrics && w->built != 0 && !w->dirty && all_synced(w))
            metrics_set_view(w->metrics, w->nodes, w->kinds, true,
                             (int64_t)time(NULL));
        cJSON_Delete(l);
        return;
    }
    if (op == NULL || kind == NULL || ri < 0 || ri >= RESOURCES_MAX) {
        log_warnx("cluster view: a line from %s that is not one: %.60s",
                  HELPER, text);
        cJSON_Delete(l);
        return;
    }
    if (strcmp(op, "item") == 0) {
        rc = on_item(w, ri, kind, cJSON_GetObjectItem(l, "object"));
    } else if (strcmp(op, "listed") == 0) {
        rc = on_listed(w, ri, kind,
                       cJSON_IsTrue(cJSON_GetObjectItem(l, "whole")));
    } else if (strcmp(op, "event") == 0) {
        const char *type =
            cJSON_GetStringValue(cJSON_GetObjectItem(l, "type"));
        const cJSON *obj = cJSON_GetObjectItem(l, "object");
        bool node = strcmp(kind, "Node") == 0, gone = type &&
                                                      strcmp(type, "DELETED") ==
                                                          0;
        rc = gone   ? (node ? view_index_del_node(w->index, obj)
                            : view_index_del_object(w->index, kind, obj))
             : node ? view_index_put_node(w->index, obj)
                    : view_index_put_object(w->index, kind, obj);
        w->dirty = w->dirty || rc > 0;
    } else if (strcmp(op, "restart") == 0 && w->metrics) {
        metrics_watch_restart(
            w->metrics,
            cJSON_GetStringValue(cJSON_GetObjectItem(l, "reason")) ?: "other");
    } else if (strcmp(op, "state") == 0) {
        int i = kube_resource_index(res);
        size_t n;
        if (i >= 0 && i < RESOURCES_MAX)
            w->synced[i] = kube_resource_settled(
                &kube_resources(&n)[i],
                cJSON_IsTrue(cJSON_GetObjectItem(l, "synced")),
                cJSON_GetStringValue(cJSON_GetObjectItem(l, "why")));
        w->dirty = true; /* the synced gauge */
    }
    if (rc < 0)
        log_warnx("cluster view: out of memory reading %s", res);
    cJSON_Delete(l);
}

/* Reads what is there; each whole line to on_line(). 0, or -1 at the end
 * of the stream (or a line past LINE_MAX_BYTES). */
static int
read_lines(struct kubewatch *w)
{
    char chunk[65536];
    ssize_t n = read(w->fd, chunk, sizeof(chunk));
    char *nl;

    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0)
        return -1;
    w->heard_ms = now_ms();
    if (w->len + (size_t)n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 65536;
        char *grown;
        while (cap < w->len + (size_t)n + 1)
            cap *= 2;
        if (cap > LINE_MAX_BYTES || (grown = realloc(w->buf, cap)) == NULL) {
            log_warnx("cluster view: a line from %s over %u MiB: restarting "
                      "it",
                      HELPER, LINE_MAX_BYTES >> 20);
            w->len = 0;
            return -1;
        }
        w->buf = grown;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, chunk, (size_t)n);
    /* Only the new bytes can end the line begun before them. */
    char *start = w->buf, *scan = w->buf + w->len;
    w->len += (size_t)n;
    w->buf[w->len] = '\0';
    while ((nl = memchr(scan, '\n', (size_t)(w->buf + w->len - scan))) !=
           NULL) {
        *nl = '\0';
        on_line(w, start);
        start = scan = nl + 1;
    }
    w->len -= (size_t)(start - w->buf);
    memmove(w->buf, start, w->len);
    if (w->cap > LINE_KEEP_BYTES && w->len < LINE_KEEP_BYTES / 2) {
        char *less = realloc(w->buf, LINE_KEEP_BYTES / 2);
        if (less != NULL) {
            w->buf = less;
            w->cap = LINE_KEEP_BYTES / 2;
        }
    }
    return 0;
}

/* --- the thread ----------------------------------------------------- */

/* At most once a second: a new view, if anything decisions read changed. */
static void
publish(struct kubewatch *w)
{
    time_t now = time(NULL);
    struct view *v;

    if (w->srv == NULL || !w->dirty || now - w->built < BUILD_INTERVAL_S)
        return;
    if ((v = view_build(w->index)) == NULL) {
        log_warnx("cluster view: out of memory building the view");
        return;
    }
    if (v->too_many != w->too_many && (w->too_many = v->too_many))
        log_warnx("cluster view: more than %d kinds of GPU node; a per-node "
                  "label is likely: decisions fall back to pins",
                  VIEW_KINDS_MAX);
    for (; w->per_node_logged < v->n_per_node; w->per_node_logged++)
        log_info("cluster view: label '%s' differs on most nodes that carry "
                 "it: kinds are not split by its value",
                 v->per_node[w->per_node_logged]);
    server_set_view(w->srv, v);
    w->nodes = v->n_nodes;
    w->kinds = v->n_kinds;
    /* The age counts from when the view was last known current: built
     * with every resource in sync (or so confirmed by a heartbeat). */
    if (w->metrics)
        metrics_set_view(w->metrics, v->n_nodes, v->n_kinds, all_synced(w),
                         all_synced(w) ? (int64_t)now : 0);
    /* A cluster that shrank by half: give the memory back. */
    if (v->n_nodes < w->trimmed_nodes / 2)
        trim(w, v->n_nodes);
    else if (v->n_nodes > w->trimmed_nodes)
        w->trimmed_nodes = v->n_nodes;
    log_debug("cluster view: %zu GPU nodes of %zu kinds", v->n_nodes,
              v->n_kinds);
    view_unref(v);
    w->built = now;
    w->dirty = false;
}

/* The helper ended: say why, and when to try again. */
static void
helper_ended(struct kubewatch *w, uint64_t *next_ms, uint64_t now_ms)
{
    int status;

    close(w->fd);
    w->fd = -1;
    w->len = 0;
    if (w->cmd_fd >= 0)
        close(w->cmd_fd);
    w->cmd_fd = -1;
    if (w->live)
        liveaudit_helper_ended(w->live);
    status = helper_reap(w->child);
    w->child = -1;
    memset(w->synced, 0, sizeof(w->synced));
    for (size_t i = 0; i < RESOURCES_MAX; i++) {
        view_index_free(w->staging[i]); /* lists it did not finish */
        w->staging[i] = NULL;
    }
    w->dirty = true;
    if (w->metrics)
        metrics_watch_restart(w->metrics, "helper_exit");
    if (status == 2) {
        log_warnx("cluster view: off: %s cannot use its configuration (see "
                  "its message above); decisions fall back to what pods pin",
                  HELPER);
        w->gave_up = true;
        return;
    }
    if (time(NULL) - w->child_started >= HEALTHY_S)
        w->backoff_ms = BACKOFF_MIN_MS;
    log_warnx("cluster view: %s exited (%d); again in %u ms", HELPER, status,
              w->backoff_ms);
    *next_ms = now_ms + w->backoff_ms;
    w->backoff_ms = w->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS
                                                       : w->backoff_ms * 2;
}

static uint64_t
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void *
watch_thread(void *arg)
{
    struct kubewatch *w = arg;
    uint64_t next_spawn = 0;
    char err[512];

    for (;;) {
        struct pollfd fds[2] = {{w->wake[0], POLLIN, 0}, {w->fd, POLLIN, 0}};
        uint64_t now = now_ms();

        if (w->child < 0 && !w->gave_up && now >= next_spawn) {
            if (helper_spawn(w->kubeconfig, w->live ? "--live-audit" : NULL,
                             &w->child, &w->fd, w->live ? &w->cmd_fd : NULL,
                             err, sizeof(err)) < 0) {
                log_warnx("cluster view: %s", err);
                w->gave_up = true;
            } else {
                w->child_started = time(NULL);
                w->heard_ms = now;
            }
        }
        if (w->child > 0 && now - w->heard_ms >= w->silent_ms) {
            /* Stuck or stopped (SIGSTOP): its view is no longer in sync.
             * Killed, it ends as any helper does, below. */
            log_warnx("cluster view: %s silent for %llu s: view not in sync, "
                      "starting it again",
                      HELPER, (unsigned long long)(w->silent_ms / 1000));
            memset(w->synced, 0, sizeof(w->synced));
            if (w->metrics)
                metrics_set_view(w->metrics, w->nodes, w->kinds, false, 0);
            kill(w->child, SIGKILL);
            w->heard_ms = now; /* once */
        }
        fds[1].fd = w->fd;
        if (poll(fds, w->fd >= 0 ? 2 : 1, 1000) < 0 && errno != EINTR)
            break;
        if (fds[0].revents)
            break;
        if (w->fd >= 0 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
            read_lines(w) < 0)
            helper_ended(w, &next_spawn, now_ms());
        publish(w);
        if (w->live)
            liveaudit_tick(w->live, w->cmd_fd, now_ms(), all_synced(w));
    }
    return NULL;
}

static struct kubewatch *
watch_new(const char *kubeconfig)
{
    struct kubewatch *w = calloc(1, sizeof(*w));

    if (w == NULL)
        return NULL;
    w->child = -1;
    w->fd = -1;
    w->cmd_fd = -1;
    w->wake[0] = w->wake[1] = -1;
    w->backoff_ms = BACKOFF_MIN_MS;
    w->silent_ms = SILENT_MS;
    /* Tests only: test/kube/view-scale.sh stops a helper. */
    if (getenv("TOPOGATE_TEST_HELPER_SILENT_S"))
        w->silent_ms =
            1000 * strtoull(getenv("TOPOGATE_TEST_HELPER_SILENT_S"), NULL, 10);
    if ((kubeconfig && (w->kubeconfig = strdup(kubeconfig)) == NULL) ||
        (w->index = view_index_new()) == NULL ||
        pipe2(w->wake, O_CLOEXEC) < 0) {
        kubewatch_stop(w);
        return NULL;
    }
    return w;
}

int
kubewatch_check(const char *kubeconfig, char *err, size_t err_len)
{
    pid_t pid;
    int status;

    if (helper_spawn(kubeconfig, "--check", &pid, NULL, NULL, err, err_len) <
        0)
        return -1;
    if ((status = helper_reap(pid)) != 0) {
        snprintf(err, err_len, "%s --check failed (%d): see its message",
                 HELPER, status);
        return -1;
    }
    return 0;
}

struct kubewatch *
kubewatch_start(const char *kubeconfig, struct server *srv, struct metrics *m,
                char *err, size_t err_len)
{
    return kubewatch_start_live(kubeconfig, srv, m, NULL, err, err_len);
}

struct kubewatch *
kubewatch_start_live(const char *kubeconfig, struct server *srv,
                     struct metrics *m, struct liveaudit *live, char *err,
                     size_t err_len)
{
    struct kubewatch *w;
    size_t n;

    err[0] = '\0';
    if (kubewatch_check(kubeconfig, err, err_len) < 0) {
        liveaudit_free(live);
        return NULL;
    }
    if ((w = watch_new(kubeconfig)) == NULL) {
        snprintf(err, err_len, "out of memory");
        liveaudit_free(live);
        return NULL;
    }
    w->live = live;
    w->srv = srv;
    w->metrics = m;
    if (m)
        metrics_set_view(m, 0, 0, false, 0);
    if (pthread_create(&w->thread, NULL, watch_thread, w) != 0) {
        snprintf(err, err_len, "cannot start the watch thread");
        kubewatch_stop(w);
        return NULL;
    }
    w->thread_started = true;
    kube_resources(&n);
    log_info("cluster view: watching %zu resources (kuberesources.c) through "
             "%s (%s)",
             n, HELPER, kubeconfig ? kubeconfig : "in cluster");
    return w;
}

void
kubewatch_stop(struct kubewatch *w)
{
    if (w == NULL)
        return;
    if (w->thread_started) {
        ssize_t rc = write(w->wake[1], "x", 1);
        (void)rc;
        pthread_join(w->thread, NULL);
    }
    if (w->child > 0)
        helper_stop(w->child);
    if (w->fd >= 0)
        close(w->fd);
    if (w->cmd_fd >= 0)
        close(w->cmd_fd);
    liveaudit_free(w->live);
    for (int i = 0; i < 2; i++)
        if (w->wake[i] >= 0)
            close(w->wake[i]);
    view_index_free(w->index);
    for (size_t i = 0; i < RESOURCES_MAX; i++)
        view_index_free(w->staging[i]);
    free(w->buf);
    free(w->kubeconfig);
    free(w);
}

struct view_index *
kubewatch_list_once(const char *kubeconfig)
{
    struct kubewatch *w = watch_new(kubeconfig);
    struct view_index *x;
    char err[512];
    int status;

    if (w == NULL) {
        fprintf(stderr, "topogate: out of memory\n");
        return NULL;
    }
    if (helper_spawn(kubeconfig, "--once", &w->child, &w->fd, NULL, err,
                     sizeof(err)) < 0) {
        fprintf(stderr, "topogate: %s\n", err);
        kubewatch_stop(w);
        return NULL;
    }
    while (read_lines(w) == 0)
        ;
    status = helper_reap(w->child);
    w->child = -1;
    if (status != 0) {
        fprintf(stderr, "topogate: %s could not list the cluster (%d)\n",
                HELPER, status);
        kubewatch_stop(w);
        return NULL;
    }
    x = w->index; /* handed over */
    w->index = NULL;
    kubewatch_stop(w);
    return x;
}
