/*
 * deadline.c - a watchdog thread over the open connections' windows, and
 * the slots they hold.
 *
 * The list lock is taken at accept and close (already costly events: a
 * TLS handshake) and four times a second by the watchdog; a request only
 * stores a state and a timestamp. Closing takes the lock, and
 * libmicrohttpd closes a socket only after its close notification, so the
 * watchdog never shuts down a descriptor number that meanwhile belongs to
 * someone else. Drops are counted and logged once per tick, not once per
 * connection: a flood must not become a flood of log lines.
 */
#include "webhook/deadline.h"

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include "lib/log.h"

/* How often the watchdog looks: a slow client lives at most this longer. */
#define DEADLINE_TICK_NS (250 * 1000 * 1000)

/*
 * After a burst of at least this many connections has gone down to an
 * eighth of it, the freed heap is given back to the system: each
 * connection's buffers come from the allocator's heaps, which keep the
 * pages of a flood of 1,000 connections (20 MiB) otherwise.
 */
#define DEADLINE_TRIM_AFTER 256

/*
 * A connection silent for less than this keeps its slot even when all
 * are taken: a client that has just connected is about to send (Go's
 * http.Transport dials only with a request in hand), and one that has
 * just been answered may send the next at once.
 */
#define DEADLINE_EVICT_AFTER_NS (500 * 1000 * 1000)

enum window { WINDOW_NEW, WINDOW_REQUEST, WINDOW_KEPT };

/* A peer's address, without its port: what the per-address cap counts. */
struct peer {
    sa_family_t family; /* AF_INET, AF_INET6, or 0: unknown */
    unsigned char addr[16];
};

struct deadline_conn {
    int fd;
    struct peer peer;
    atomic_int window;           /* enum window */
    atomic_uint_least64_t since; /* the window's start */
    atomic_uint_least64_t last_in; /* a handshake byte last came, or 0 */
    uint64_t request_at;         /* the request line: its thread's own */
    bool shaken;                 /* handshake done: its thread's own */
    bool over;                   /* came past its address's cap */
    uint64_t busy_at;            /* found with bytes unread then */
    bool dropped;                /* these three under the lock */
    struct deadline_conn *prev;
    struct deadline_conn *next;
};

/* Why connections went, counted between two log lines. */
enum drop {
    DROP_HEAD,
    DROP_REQUEST,
    DROP_KEPT,
    DROP_EVICTED,
    DROP_REFUSED,
    DROP_N
};

struct deadline {
    const char *name;
    uint64_t limit_ns;
    uint64_t kept_ns;
    uint64_t first_ns;
    unsigned int seconds;
    unsigned int kept_s;
    unsigned int first_ms;
    unsigned int capacity;
    unsigned int per_peer;
    unsigned int count; /* open connections, under the lock */
    unsigned int over;  /* of them, live ones with over set */
    unsigned int peak;  /* the most open since the last trim */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stopping;
    struct deadline_conn *head; /* newest first */
    unsigned long drops[DROP_N];
    char last_host[DROP_N][INET6_ADDRSTRLEN];
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
peer_of(struct peer *p, const struct sockaddr *sa)
{
    memset(p, 0, sizeof(*p));
    if (sa != NULL && sa->sa_family == AF_INET) {
        p->family = AF_INET;
        memcpy(p->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa != NULL && sa->sa_family == AF_INET6) {
        p->family = AF_INET6;
        memcpy(p->addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    }
}

static bool
peer_same(const struct peer *a, const struct peer *b)
{
    return a->family != 0 && a->family == b->family &&
           memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static void
peer_name(const struct peer *p, char *host, size_t size)
{
    snprintf(host, size, "?");
    if (p->family != 0)
        inet_ntop(p->family, p->addr, host, (socklen_t)size);
}

/* Under the lock. */
static void
deadline_drop(struct deadline *d, struct deadline_conn *c, enum drop why)
{
    d->drops[why]++;
    peer_name(&c->peer, d->last_host[why], sizeof(d->last_host[why]));
    shutdown(c->fd, SHUT_RDWR);
    c->dropped = true;
    if (c->over) {
        c->over = false;
        d->over--;
    }
}

/* Under the lock: one line per reason seen since the last tick. */
static void
deadline_report(struct deadline *d)
{
    for (int why = 0; why < DROP_N; why++) {
        unsigned long n = d->drops[why];
        const char *host = d->last_host[why];

        if (n == 0)
            continue;
        d->drops[why] = 0;
        switch (why) {
        case DROP_HEAD:
            log_warnx("%s: dropped %lu connection%s (last from %s): no "
                      "whole request head %u ms after connecting",
                      d->name, n, n == 1 ? "" : "s", host, d->first_ms);
            break;
        case DROP_REQUEST:
            if (n == 1)
                log_warnx("dropped connection from %s: no whole request in "
                          "%u s",
                          host, d->seconds);
            else
                log_warnx("%s: dropped %lu connections (last from %s): no "
                          "whole request in %u s",
                          d->name, n, host, d->seconds);
            break;
        case DROP_KEPT:
            log_warnx("%s: dropped %lu kept connection%s (last from %s): "
                      "no request %u s after the handshake or the last answer",
                      d->name, n, n == 1 ? "" : "s", host, d->kept_s);
            break;
        case DROP_EVICTED:
            log_warnx("%s: slots full (%u in all, %u per address): closed "
                      "%lu silent connection%s (last from %s) for new ones",
                      d->name, d->capacity, d->per_peer, n, n == 1 ? "" : "s",
                      host);
            break;
        default:
            log_warnx("%s: slots full (%u in all, %u per address) of "
                      "requests: refused %lu new connection%s (last from %s)",
                      d->name, d->capacity, d->per_peer, n, n == 1 ? "" : "s",
                      host);
        }
    }
}

/*
 * Under the lock: a whole TLS record the client sent waits unread (a
 * ClientHello, a Finished or a request the server has not got to yet):
 * that client is on its way. A piece of one (half a ClientHello, as a
 * flood sends) is not, nor anything that is not TLS (the probe port's
 * plain HTTP: there the window alone decides).
 */
static bool
deadline_unread(const struct deadline_conn *c)
{
    unsigned char h[5]; /* type, version (2), length (2): RFC 8446 5.1 */
    int n = 0;

    if (ioctl(c->fd, FIONREAD, &n) != 0 || n < (int)sizeof(h) ||
        recv(c->fd, h, sizeof(h), MSG_PEEK | MSG_DONTWAIT) !=
            (ssize_t)sizeof(h))
        return false;
    /* change_cipher_spec (20) to application_data (23) */
    if (h[0] < 20 || h[0] > 23)
        return false;
    return n >= (int)sizeof(h) + (h[3] << 8 | h[4]);
}

/*
 * Whether c, its window w begun at since, has been quiet a moment: no
 * window begun, and in a handshake no byte of it come, for
 * DEADLINE_EVICT_AFTER_NS (a burst of handshakes on a busy server takes
 * longer than that, and each is a client's on its way), nor found busy
 * (deadline_silent()) at now. The cheap half of deadline_silent().
 */
static bool
deadline_quiet(const struct deadline_conn *c, int w, uint64_t since,
               uint64_t now)
{
    uint64_t last = atomic_load(&c->last_in);

    if (c->busy_at == now || since > now ||
        now - since < DEADLINE_EVICT_AFTER_NS)
        return false;
    return w != WINDOW_NEW || last == 0 || last > now ||
           now - last >= DEADLINE_EVICT_AFTER_NS;
}

/*
 * Under the lock: quiet, and no whole record waits unread
 * (deadline_unread()). One found busy is passed over for the rest of
 * this moment (busy_at).
 */
static bool
deadline_silent(struct deadline_conn *c, uint64_t now)
{
    if (!deadline_unread(c))
        return true;
    c->busy_at = now;
    return false;
}

/* Which connections deadline_victim() may take besides new ones. */
enum take { TAKE_NEW, TAKE_OVER_KEPT, TAKE_KEPT };

static struct deadline_conn *deadline_victim(struct deadline *d,
                                             const struct peer *only,
                                             enum take take, uint64_t now);

/*
 * Under the lock, at each tick: keeps a sixteenth of the slots free by
 * closing silent connections that never sent a whole head, then kept
 * ones that came past their address's cap (the rest of the kept ones are
 * left alone: those are a client's, such as the apiserver's pool). So a
 * burst that took every slot at once, too young to displace then, is
 * thinned as soon as it has gone silent, not only when a new connection
 * comes to displace it.
 */
static void
deadline_make_room(struct deadline *d, uint64_t now)
{
    unsigned int live = 0, spare = d->capacity / 16;
    struct deadline_conn *victim;

    for (struct deadline_conn *c = d->head; c != NULL; c = c->next)
        live += !c->dropped;
    while (live + spare > d->capacity &&
           (victim = deadline_victim(d, NULL, TAKE_OVER_KEPT, now)) != NULL) {
        deadline_drop(d, victim, DROP_EVICTED);
        live--;
    }
}

/* A live connection as deadline_trim() sorts it, read once. */
struct trim_entry {
    struct deadline_conn *c;
    int window;
    uint64_t since;
};

static int
peer_order(const struct peer *x, const struct peer *y)
{
    if (x->family != y->family)
        return x->family < y->family ? -1 : 1;
    return memcmp(x->addr, y->addr, sizeof(x->addr));
}

/* By address; in each, the order deadline_victim() takes them in. */
static int
trim_order(const void *a, const void *b)
{
    const struct trim_entry *x = a, *y = b;
    int by = peer_order(&x->c->peer, &y->c->peer);

    if (by != 0)
        return by;
    if (x->window != y->window)
        return x->window == WINDOW_NEW   ? -1
               : y->window == WINDOW_NEW ? 1
               : x->window == WINDOW_KEPT ? -1
                                          : 1;
    return (x->since > y->since) - (x->since < y->since);
}

/*
 * Under the lock, at each tick while some connection came past its
 * address's cap: each address over its cap loses its silent connections
 * that never sent a whole head, oldest first, until it is back at the
 * cap; one whose connections are all busy keeps them. Kept ones past the
 * cap stay (a client's pool after a burst: Go's keeps 25 idle and closes
 * the rest itself) but are the first kept ones taken when slots run
 * short (deadline_victim()). Once an address is within its cap its
 * connections are no longer over it. Sorted, a tick's work is the list's
 * size, not its square.
 */
static void
deadline_trim(struct deadline *d, uint64_t now)
{
    struct trim_entry *all;
    size_t n = 0;

    all = malloc(sizeof(*all) * (d->count > 0 ? d->count : 1));
    if (all == NULL)
        return; /* the next tick tries again */
    for (struct deadline_conn *c = d->head; c != NULL && n < d->count;
         c = c->next) {
        if (c->dropped)
            continue;
        all[n].c = c;
        all[n].window = atomic_load(&c->window); /* first: deadline_run() */
        all[n++].since = atomic_load(&c->since);
    }
    qsort(all, n, sizeof(*all), trim_order);
    for (size_t i = 0, j; i < n; i = j) {
        bool over = false;
        size_t same;

        for (j = i; j < n && peer_order(&all[i].c->peer, &all[j].c->peer) == 0;
             j++)
            over |= all[j].c->over;
        if (!over)
            continue;
        same = j - i;
        for (size_t k = i; k < j && same > d->per_peer; k++) {
            struct trim_entry *e = &all[k];

            if (e->window == WINDOW_NEW &&
                deadline_quiet(e->c, e->window, e->since, now) &&
                deadline_silent(e->c, now)) {
                deadline_drop(d, e->c, DROP_EVICTED);
                same--;
            }
        }
        if (same > d->per_peer)
            continue;
        for (size_t k = i; k < j; k++)
            if (!all[k].c->dropped && all[k].c->over) {
                all[k].c->over = false;
                d->over--;
            }
    }
    free(all);
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
            /* The window first: its thread stores since, then window, so
             * a window read here never pairs with an older since (a kept
             * connection's, 100 s old, under a new head's 3 s limit). */
            int w = atomic_load(&c->window);
            uint64_t since = atomic_load(&c->since);
            uint64_t limit = w == WINDOW_NEW    ? d->first_ns
                             : w == WINDOW_KEPT ? d->kept_ns
                                                : d->limit_ns;

            /* since may be a moment after now: a window just restarted. */
            if (!c->dropped && since < now && now - since > limit)
                deadline_drop(d, c,
                              w == WINDOW_NEW    ? DROP_HEAD
                              : w == WINDOW_KEPT ? DROP_KEPT
                                                 : DROP_REQUEST);
        }
        if (d->over > 0)
            deadline_trim(d, now);
        if (d->count + d->capacity / 16 > d->capacity)
            deadline_make_room(d, now);
        deadline_report(d);
        if (d->count > d->peak)
            d->peak = d->count;
        if (d->peak >= DEADLINE_TRIM_AFTER && d->count <= d->peak / 8) {
            d->peak = d->count;
            /* Off the lock: it walks every heap, a few milliseconds. */
            pthread_mutex_unlock(&d->lock);
            malloc_trim(0);
            pthread_mutex_lock(&d->lock);
        }
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

struct deadline *
deadline_new(const char *name, unsigned int seconds, unsigned int kept_s,
             unsigned int first_ms, unsigned int capacity,
             unsigned int per_peer)
{
    struct deadline *d;
    pthread_condattr_t attr;

    d = calloc(1, sizeof(*d));
    if (d == NULL)
        return NULL;
    d->name = name;
    d->seconds = seconds;
    d->limit_ns = (uint64_t)seconds * 1000000000u;
    d->kept_s = kept_s;
    d->kept_ns = (uint64_t)kept_s * 1000000000u;
    d->first_ms = first_ms;
    d->first_ns = (uint64_t)first_ms * 1000000u;
    d->capacity = capacity > 0 ? capacity : 1;
    d->per_peer = per_peer > 0 ? per_peer : d->capacity;
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
    pthread_mutex_lock(&d->lock);
    deadline_report(d);
    pthread_mutex_unlock(&d->lock);
    pthread_cond_destroy(&d->wake);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

/* How many busy picks deadline_victim() passes over before it gives up. */
#define DEADLINE_VICTIM_TRIES 16

/*
 * Under the lock: the connection to close for a new one. In order: the
 * one quiet longest (deadline_quiet()) of those that never sent a whole
 * head; else of the kept ones between requests (the apiserver's are kept
 * ones) that take allows, first those that came past their address's
 * cap. Among one address's own, if only. One in a request is never
 * taken, nor a young one, nor one answered only a moment ago, nor one
 * with bytes unread. The kernel is asked only about the pick. NULL if
 * none.
 */
static struct deadline_conn *
deadline_victim(struct deadline *d, const struct peer *only, enum take take,
                uint64_t now)
{
    for (int tries = 0; tries < DEADLINE_VICTIM_TRIES; tries++) {
        struct deadline_conn *fresh = NULL, *kept[2] = {NULL, NULL}, *pick;
        uint64_t fresh_since = now, kept_since[2] = {now, now};

        for (struct deadline_conn *c = d->head; c != NULL; c = c->next) {
            int w = atomic_load(&c->window); /* first: see deadline_run() */
            uint64_t since = atomic_load(&c->since);

            if (c->dropped || (only != NULL && !peer_same(only, &c->peer)))
                continue;
            if (w == WINDOW_NEW && since <= fresh_since &&
                deadline_quiet(c, w, since, now)) {
                fresh = c;
                fresh_since = since;
            } else if (w == WINDOW_KEPT &&
                       (take == TAKE_KEPT ||
                        (take == TAKE_OVER_KEPT && c->over)) &&
                       since <= kept_since[c->over] &&
                       deadline_quiet(c, w, since, now)) {
                kept[c->over] = c;
                kept_since[c->over] = since;
            }
        }
        pick = fresh != NULL ? fresh : kept[1] != NULL ? kept[1] : kept[0];
        if (pick == NULL || deadline_silent(pick, now))
            return pick;
    }
    return NULL;
}

/*
 * Under the lock, all slots taken and none silent: the oldest connection
 * that came past its address's cap and has not sent a byte (a flood of
 * sockets opened faster than they go quiet), so that an address over its
 * cap cannot keep another's out. NULL if none.
 */
static struct deadline_conn *
deadline_unstarted(struct deadline *d, uint64_t now)
{
    for (int tries = 0; tries < DEADLINE_VICTIM_TRIES; tries++) {
        struct deadline_conn *pick = NULL;
        uint64_t pick_since = UINT64_MAX;

        for (struct deadline_conn *c = d->head; c != NULL; c = c->next) {
            uint64_t since = atomic_load(&c->since);

            if (!c->dropped && c->over && c->busy_at != now &&
                since <= pick_since &&
                atomic_load(&c->window) == WINDOW_NEW &&
                atomic_load(&c->last_in) == 0) {
                pick = c;
                pick_since = since;
            }
        }
        if (pick == NULL || deadline_silent(pick, now))
            return pick;
    }
    return NULL;
}

/* How many addresses past their cap deadline_hog() compares at most. */
#define DEADLINE_HOGS 8

/*
 * Under the lock, all slots taken and none silent nor unstarted: the
 * oldest new connection, with no whole record waiting, of the address
 * that holds the most past its cap, if it holds more than the newcomer's
 * (same of them). So a flood from one address that keeps sending, too
 * fast to go silent, pays for another's new connection, never the other
 * way round; and an address never takes its own this way (its new one is
 * refused instead: the older ones are further on). NULL if none.
 */
static struct deadline_conn *
deadline_hog(struct deadline *d, const struct peer *newcomer,
             unsigned int same, uint64_t now)
{
    struct peer seen[DEADLINE_HOGS];
    const struct peer *hog = NULL;
    unsigned int hog_n = same > d->per_peer ? same : d->per_peer, n_seen = 0;

    for (struct deadline_conn *c = d->head;
         c != NULL && n_seen < DEADLINE_HOGS; c = c->next) {
        unsigned int n = 0, k;

        if (c->dropped || !c->over || peer_same(&c->peer, newcomer))
            continue;
        for (k = 0; k < n_seen && !peer_same(&seen[k], &c->peer); k++)
            ;
        if (k < n_seen)
            continue;
        seen[n_seen++] = c->peer;
        for (struct deadline_conn *o = d->head; o != NULL; o = o->next)
            n += !o->dropped && peer_same(&o->peer, &c->peer);
        if (n > hog_n) {
            hog_n = n;
            hog = &seen[n_seen - 1];
        }
    }
    for (int tries = 0; hog != NULL && tries < DEADLINE_VICTIM_TRIES;
         tries++) {
        struct deadline_conn *pick = NULL;
        uint64_t pick_since = UINT64_MAX;

        for (struct deadline_conn *c = d->head; c != NULL; c = c->next) {
            uint64_t since = atomic_load(&c->since);

            if (!c->dropped && c->over && c->busy_at != now &&
                since <= pick_since && peer_same(&c->peer, hog) &&
                atomic_load(&c->window) == WINDOW_NEW) {
                pick = c;
                pick_since = since;
            }
        }
        if (pick == NULL || deadline_silent(pick, now))
            return pick;
    }
    return NULL;
}

/*
 * Under the lock: makes room for c, or false when there is none. The
 * connections already dropped are on their way out and not counted. One
 * walk of the list: at accept only, and the list is what is open.
 *
 * An address at its cap gives up its own silent connection, else it goes
 * over the cap: all of its connections are busy (a burst of handshakes,
 * requests in flight), which is the apiserver's way in a burst; a reset
 * here would fail a review. The watchdog brings it back to its cap as its
 * connections go silent (deadline_trim()).
 */
static bool
deadline_room(struct deadline *d, const struct deadline_conn *c, uint64_t now)
{
    unsigned int live = 0, same = 0;
    struct deadline_conn *victim;

    for (struct deadline_conn *o = d->head; o != NULL; o = o->next) {
        live += !o->dropped;
        same += !o->dropped && peer_same(&o->peer, &c->peer);
    }
    if (same >= d->per_peer &&
        (victim = deadline_victim(d, &c->peer, TAKE_KEPT, now)) != NULL) {
        deadline_drop(d, victim, DROP_EVICTED);
        return true;
    }
    if (live < d->capacity)
        return true;
    victim = deadline_victim(d, NULL, TAKE_KEPT, now);
    if (victim == NULL)
        victim = deadline_unstarted(d, now);
    if (victim == NULL)
        victim = deadline_hog(d, &c->peer, same, now);
    if (victim == NULL)
        return false;
    deadline_drop(d, victim, DROP_EVICTED);
    return true;
}

bool
deadline_admit(struct deadline *d, const struct sockaddr *peer)
{
    struct deadline_conn probe = {.fd = -1};
    bool room;

    peer_of(&probe.peer, peer);
    pthread_mutex_lock(&d->lock);
    if (!(room = deadline_room(d, &probe, deadline_now()))) {
        d->drops[DROP_REFUSED]++;
        peer_name(&probe.peer, d->last_host[DROP_REFUSED],
                  sizeof(d->last_host[DROP_REFUSED]));
    }
    pthread_mutex_unlock(&d->lock);
    return room;
}

struct deadline_conn *
deadline_open(struct deadline *d, int fd, const struct sockaddr *peer)
{
    struct deadline_conn *c;
    uint64_t now = deadline_now();
    unsigned int same = 0;

    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->fd = fd;
    peer_of(&c->peer, peer);
    atomic_init(&c->window, WINDOW_NEW);
    atomic_init(&c->since, now);
    c->request_at = now;
    pthread_mutex_lock(&d->lock);
    /* Past its address's cap: deadline_room() let it in over it. */
    for (struct deadline_conn *o = d->head; o != NULL; o = o->next)
        same += !o->dropped && peer_same(&o->peer, &c->peer);
    if (same >= d->per_peer) {
        c->over = true;
        d->over++;
    }
    c->next = d->head;
    if (d->head != NULL)
        d->head->prev = c;
    d->head = c;
    d->count++;
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
    d->count--;
    if (c->over)
        d->over--;
    pthread_mutex_unlock(&d->lock);
    free(c);
}

void
deadline_handshake_done(struct deadline_conn *c)
{
    c->shaken = true;
    if (atomic_load(&c->window) == WINDOW_NEW) {
        atomic_store(&c->since, deadline_now());
        atomic_store(&c->window, WINDOW_KEPT);
    }
}

void
deadline_bytes_in(struct deadline_conn *c)
{
    int w = atomic_load(&c->window);

    if (w == WINDOW_KEPT) {
        atomic_store(&c->since, deadline_now());
        atomic_store(&c->window, WINDOW_NEW);
    } else if (w == WINDOW_NEW && !c->shaken) {
        /* A handshake under way: not silent (deadline_silent()). */
        atomic_store(&c->last_in, deadline_now());
    }
}

void
deadline_request_line(struct deadline_conn *c)
{
    c->request_at = deadline_now();
    /* A new connection stays in its short window until the head is in. */
    if (atomic_load(&c->window) == WINDOW_KEPT) {
        atomic_store(&c->since, c->request_at);
        atomic_store(&c->window, WINDOW_REQUEST);
    }
}

void
deadline_request_head(struct deadline_conn *c)
{
    if (atomic_load(&c->window) == WINDOW_NEW) {
        atomic_store(&c->since, c->request_at);
        atomic_store(&c->window, WINDOW_REQUEST);
    }
}

void
deadline_answered(struct deadline_conn *c)
{
    atomic_store(&c->since, deadline_now());
    atomic_store(&c->window, WINDOW_KEPT);
}

uint64_t
deadline_since(const struct deadline_conn *c)
{
    return c->request_at;
}
