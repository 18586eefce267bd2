/*
 * kubereq.h - the apiserver's URLs, and a libcurl handle set up for one
 * request to it: HTTP/1.1, https only, the server's certificate always
 * verified, and every call bounded in time.
 *
 * Strings given are borrowed for the call (libcurl copies what it
 * keeps); what is returned is owned by the caller.
 */
#ifndef TOPOGATE_KUBEREQ_H
#define TOPOGATE_KUBEREQ_H

#include <stdbool.h>
#include <stddef.h>

#include <curl/curl.h>

/* Every call waits this long at most for TCP and TLS to connect. */
#define KUBEREQ_CONNECT_TIMEOUT_S 10
/* A list page or discovery document, whole. */
#define KUBEREQ_TIMEOUT_S 60

/* What a list or watch is of, and where from. */
struct kubereq_target {
    const char *server;  /* "https://host:port", no trailing slash */
    const char *group;   /* "" for the core API */
    const char *version; /* "v1" */
    const char *plural;  /* "nodes" */
    const char *selector; /* labelSelector, or NULL */
};

/* GET /apis/GROUP: the APIGroup, with the versions served. */
char *kubereq_discovery_url(const char *server, const char *group);

/*
 * One page of a list: limit, and either cont (the token carries the
 * list's resourceVersion, and the apiserver refuses both) or
 * resourceVersion=0 unless rv_unset (a quorum read, after a 410 on a
 * list). at_rv (not NULL): resourceVersion=at_rv and no limit instead,
 * as client-go's reflector lists after a 410 on a watch: data at least
 * that new, which the watch cache serves only unpaged
 * (tools/cache/reflector.go, list() and relistResourceVersion()).
 */
char *kubereq_list_url(const struct kubereq_target *t, int limit,
                       const char *cont, bool rv_unset, const char *at_rv);

/* A watch from rv, with bookmarks, ending after timeout_s. */
char *kubereq_watch_url(const struct kubereq_target *t, const char *rv,
                        unsigned timeout_s);

struct kubereq_opts {
    const char *url;
    const char *ca_file;   /* NULL: the system's trust store */
    const char *cert_file; /* client certificate, or NULL */
    const char *key_file;
    const char *token; /* bearer token, or NULL */
    /*
     * A watch: no whole-request timeout but a low-speed limit of one
     * byte a second over stall_s, and the connection is never reused
     * (a watch ends by a close or by our abort, never read whole).
     */
    bool watch;
    long stall_s;
    long max_s; /* a watch's guard past its timeoutSeconds */
};

/*
 * An easy handle for o, with *hdrs the header list it uses (free it with
 * curl_slist_free_all() after the handle). Callbacks, private data and
 * the error buffer are the caller's to set. NULL when out of memory.
 */
CURL *kubereq_new(const struct kubereq_opts *o, struct curl_slist **hdrs);

#endif
