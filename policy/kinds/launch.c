/* launch.c - see launch.h. */
#include "policy/kinds/launch.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/k8s/pod.h"

enum flag {
    FLAG_NONE,
    FLAG_NNODES,
    FLAG_NPROC,
    FLAG_NP,
    FLAG_WORLD,
    FLAG_PER_NODE,
    FLAG_MAP_BY
};

static enum flag
flag_of(const char *tok, size_t len)
{
    static const struct {
        const char *name;
        enum flag flag;
    } flags[] = {
        {"--nnodes", FLAG_NNODES},
        {"--nproc_per_node", FLAG_NPROC},
        {"--nproc-per-node", FLAG_NPROC},
        {"-np", FLAG_NP},
        {"--np", FLAG_NP},
        {"--world-size", FLAG_WORLD},
        {"--world_size", FLAG_WORLD},
        {"WORLD_SIZE", FLAG_WORLD},
        /* mpirun(1) of Open MPI 4.1 and 5.0: ranks per node. */
        {"-npernode", FLAG_PER_NODE},
        {"--npernode", FLAG_PER_NODE},
        {"-N", FLAG_PER_NODE},
        {"--map-by", FLAG_MAP_BY},
        {"-map-by", FLAG_MAP_BY},
    };
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (strlen(flags[i].name) == len &&
            memcmp(tok, flags[i].name, len) == 0)
            return flags[i].flag;
    return FLAG_NONE;
}

/* A literal count: "8", or "1:4" (the maximum); -1 otherwise. */
static long
literal(const char *s, size_t len)
{
    char buf[32];
    const char *colon;

    if (len == 0 || len >= sizeof(buf) || !isdigit((unsigned char)*s))
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if ((colon = strchr(buf, ':')) != NULL)
        memmove(buf, colon + 1, strlen(colon));
    return pod_text_count(buf);
}

/* --map-by ppr:N:node (any modifiers after it): N; -1 otherwise. */
static long
ppr_per_node(const char *s, size_t len)
{
    size_t digits = 0;

    if (len < 4 || memcmp(s, "ppr:", 4) != 0)
        return -1;
    s += 4;
    len -= 4;
    while (digits < len && isdigit((unsigned char)s[digits]))
        digits++;
    if (digits == 0 || len - digits < 5 || memcmp(s + digits, ":node", 5) != 0)
        return -1;
    return literal(s, digits);
}

static void
record(struct launch *l, enum flag f, long v, const char *tok, size_t tlen,
       char sep, const char *val, size_t vlen)
{
    size_t used;
    long *slot = f == FLAG_NNODES  ? &l->nnodes
                 : f == FLAG_NPROC ? &l->nproc
                 : f == FLAG_NP    ? &l->np
                 : f == FLAG_WORLD ? &l->world
                                   : &l->per_node;

    if (f == FLAG_MAP_BY)
        v = ppr_per_node(val, vlen);
    if (*slot >= 0 || v < 0)
        return;
    *slot = v;
    used = strlen(l->written);
    snprintf(l->written + used, sizeof(l->written) - used, "%s'%.*s%c%.*s'",
             used ? " and " : "", (int)tlen, tok, sep, (int)vlen, val);
}

/* Words of one string, split on blanks and shell punctuation. */
static void
scan(const char *s, struct launch *l, enum flag *pending, const char **ptok,
     size_t *ptlen)
{
    while (*s) {
        size_t len;
        const char *eq;

        while (*s && (isspace((unsigned char)*s) || strchr(";&|\"'", *s)))
            s++;
        len = strcspn(s, " \t\r\n;&|\"'");
        if (len == 0)
            break;
        if (*pending != FLAG_NONE) {
            record(l, *pending, literal(s, len), *ptok, *ptlen, ' ', s, len);
            *pending = FLAG_NONE;
        } else if ((eq = memchr(s, '=', len)) != NULL) {
            enum flag f = flag_of(s, (size_t)(eq - s));
            size_t vlen = len - (size_t)(eq - s) - 1;
            if (f != FLAG_NONE)
                record(l, f, literal(eq + 1, vlen), s, (size_t)(eq - s), '=',
                       eq + 1, vlen);
        } else if ((*pending = flag_of(s, len)) != FLAG_NONE) {
            *ptok = s;
            *ptlen = len;
        }
        s += len;
    }
}

void
launch_read(const cJSON *container, struct launch *l)
{
    static const char *const fields[] = {"command", "args"};
    enum flag pending = FLAG_NONE;
    const char *tok = NULL;
    size_t tlen = 0;

    memset(l, 0, sizeof(*l));
    l->nnodes = l->nproc = l->np = l->world = l->per_node = -1;
    for (int i = 0; i < 2; i++) {
        const cJSON *word;
        cJSON_ArrayForEach(word, json_get(container, fields[i]))
        {
            if (cJSON_IsString(word))
                scan(word->valuestring, l, &pending, &tok, &tlen);
        }
    }
}

bool
launch_hardcoded(const struct launch *l)
{
    return l->nnodes > 0 || l->nproc > 0 || l->np > 0 || l->world > 0 ||
           l->per_node > 0;
}

/*
 * Calls fn on each word of command and args, split as scan() splits
 * them, until it returns true; returns whether one did.
 */
static bool
each_word(const cJSON *container,
          bool (*fn)(const char *w, size_t len, void *arg), void *arg)
{
    static const char *const fields[] = {"command", "args"};

    for (int i = 0; i < 2; i++) {
        const cJSON *word;
        cJSON_ArrayForEach(word, json_get(container, fields[i]))
        {
            const char *s = cJSON_IsString(word) ? word->valuestring : "";
            while (*s) {
                size_t len;
                while (*s &&
                       (isspace((unsigned char)*s) || strchr(";&|\"'", *s)))
                    s++;
                len = strcspn(s, " \t\r\n;&|\"'");
                if (len == 0)
                    break;
                if (fn(s, len, arg))
                    return true;
                s += len;
            }
        }
    }
    return false;
}

struct export_scan {
    const char *name;
    bool after_x; /* the previous word was -x */
};

static bool
is_export(const char *w, size_t len, void *arg)
{
    struct export_scan *e = arg;
    size_t n = strlen(e->name);

    if (e->after_x) {
        e->after_x = false;
        if (len >= n && memcmp(w, e->name, n) == 0 &&
            (len == n || w[n] == '='))
            return true;
    }
    e->after_x = len == 2 && memcmp(w, "-x", 2) == 0;
    return false;
}

bool
launch_exports(const cJSON *container, const char *name)
{
    struct export_scan e = {name, false};
    return each_word(container, is_export, &e);
}

static bool
is_word(const char *w, size_t len, void *arg)
{
    const char *word = arg;
    return strlen(word) == len && memcmp(w, word, len) == 0;
}

bool
launch_has_word(const cJSON *container, const char *word)
{
    return each_word(container, is_word, (void *)word);
}

/* Whether a word's last path component is one of Open MPI's launchers. */
static bool
is_mpi_launcher(const char *w, size_t len, void *arg)
{
    static const char *const names[] = {"mpirun", "mpiexec", "orterun",
                                        "prterun"};
    const char *base = w;

    (void)arg;
    for (size_t i = 0; i < len; i++)
        if (w[i] == '/')
            base = w + i + 1;
    len -= (size_t)(base - w);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == len && memcmp(base, names[i], len) == 0)
            return true;
    return false;
}

bool
launch_runs_mpirun(const cJSON *container)
{
    return each_word(container, is_mpi_launcher, NULL);
}

/* Whether a word holds the text arg (a NUL-terminated string). */
static bool
holds_text(const char *w, size_t len, void *arg)
{
    const char *text = arg;
    size_t n = strlen(text);

    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(w + i, text, n) == 0)
            return true;
    return false;
}

bool
launch_mentions(const cJSON *container, const char *text)
{
    const cJSON *e;

    if (each_word(container, holds_text, (void *)text))
        return true;
    cJSON_ArrayForEach(e, json_get(container, "env"))
    {
        const char *n = json_string(e, "name"), *v = json_string(e, "value");
        if ((n && strstr(n, text)) || (v && strstr(v, text)))
            return true;
    }
    return false;
}
