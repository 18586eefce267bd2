/*
 * deadline.c - a watchdog thread over the open connections' windows.
 *
 * The list lock is taken at accept and close (already costly events: a
 * TLS handshake) and four times a second by the watchdog; a request only
 * stores a timestamp. Closing takes the lock, and libmicrohttpd closes a
 * socket only after its close notification, so the watchdog never shuts
 * down a descriptor number that meanwhile belongs to someone else.
 */
#include "webhook/deadline.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "webhook/log.h"

/* How often the watchdog looks: a slow client lives at most this longer. */
#define DEADLINE_TICK_NS (250 * 1000 * 1000)

struct deadline_conn {
    int fd;
    atomic_uint_least64_t since;
    bool dropped; /* under the lock */
    struct deadline_conn *prev;
    struct deadline_conn *next;
};

struct deadline {
    uint64_t limit_ns;
    unsigned int seconds;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;
    struct deadline_conn *head;
    pthread_t thread;
};

uint64_t
deadline_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
deadline_drop(struct deadline *d, struct deadline_conn *c)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char host[INET6_ADDRSTRLEN] = "?";

    if (getpeername(c->fd, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host,
                      sizeof(host));
        else if (ss.ss_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host,
                      sizeof(host));
    }
    log_warnx("dropped connection from %s: no whole request in %u s", host,
              d->seconds);
    shutdown(c->fd, SHUT_RDWR);
    c->dropped = true;
}

static void *
deadline_run(void *arg)
{
    struct deadline *d = arg;

    pthread_mutex_lock(&d->lock);
    while (!d->stopping) {
        uint64_t at = deadline_now() + DEADLINE_TICK_NS;
        struct timespec ts = {.tv_sec = (time_t)(at / 1000000000u),
                              .tv_nsec = (long)(at % 1000000000u)};

        pthread_cond_timedwait(&d->wake, &d->lock, &ts);
        uint64_t now = deadline_now();
        for (struct deadline_conn *c = d->head; c != NULL; c = c->next) {
            uint64_t since = atomic_load(&c->since);
            /* since may be a moment after now: a window just restarted. */
            if (!c->dropped && since < now && now - since > d->limit_ns)
                deadline_drop(d, c);
        }
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

struct deadline *
deadline_new(unsigned int seconds)
{
    struct deadline *d;
    pthread_condattr_t attr;

    d = calloc(1, sizeof(*d));
    if (d == NULL)
        return NULL;
    d->seconds = seconds;
    d->limit_ns = (uint64_t)seconds * 1000000000u;
    pthread_mutex_init(&d->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&d->wake, &attr);
    pthread_condattr_destroy(&attr);
    if (pthread_create(&d->thread, NULL, deadline_run, d) != 0)
        goto fail;
    return d;
fail:
    pthread_cond_destroy(&d->wake);
    pthread_mutex_destroy(&d->lock);
    free(d);
    return NULL;
}

void
deadline_free(struct deadline *d)
{
    if (d == NULL)
        return;
    pthread_mutex_lock(&d->lock);
    d->stopping = true;
    pthread_cond_signal(&d->wake);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    pthread_cond_destroy(&d->wake);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

struct deadline_conn *
deadline_open(struct deadline *d, int fd)
{
    struct deadline_conn *c;

    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->fd = fd;
    atomic_init(&c->since, deadline_now());
    pthread_mutex_lock(&d->lock);
    c->next = d->head;
    if (d->head != NULL)
        d->head->prev = c;
    d->head = c;
    pthread_mutex_unlock(&d->lock);
    return c;
}

void
deadline_close(struct deadline *d, struct deadline_conn *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&d->lock);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        d->head = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&d->lock);
    free(c);
}

void
deadline_restart(struct deadline_conn *c)
{
    atomic_store(&c->since, deadline_now());
}

uint64_t
deadline_since(const struct deadline_conn *c)
{
    return atomic_load(&c->since);
}
