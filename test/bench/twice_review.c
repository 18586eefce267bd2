/*
 * twice_review.c - a measuring instrument, not a webhook: linked into
 * build/bench/topogate-twice with -Wl,--wrap=review_respond_in_place, it
 * runs a first review before each one it answers and drops the first's
 * answer. Beside topogate and topogate-floor it tells what a review costs
 * right after another review, where topogate's cost is what it costs
 * right after the transport (issue 15's twenty-first round). What the
 * first review reads is set by the name the binary runs under:
 *   topogate-twice              a copy of the request's own body
 *   topogate-twice-copy         that copy only, no first review: the
 *                               baseline the other two are read against
 *   topogate-twice-first-NAME   a copy of ../fixtures/NAME.json beside the
 *                               binary's directory (the bench bundle's
 *                               layout), read once at the first review
 * The answer sent is always the second review's, topogate's own. At its
 * exit it says on stderr how many first reviews and copies it made, so a
 * test can tell that it measures what its name says.
 */
#include <errno.h>
#include <libgen.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/review.h"

#define FIRST_PREFIX "topogate-twice-first-"
#define FIXTURE_MAX (4 * 1024 * 1024)

int __real_review_respond_in_place(struct jsonarena *arena,
                                   const struct snapshot *s,
                                   const struct view *view, char *body,
                                   size_t len, struct review_result *out);
int __wrap_review_respond_in_place(struct jsonarena *arena,
                                   const struct snapshot *s,
                                   const struct view *view, char *body,
                                   size_t len, struct review_result *out);

static pthread_once_t mode_once = PTHREAD_ONCE_INIT;
static pthread_key_t scratch_key; /* each pool thread's copy, freed at exit */
static bool copy_only;
static char *fixture; /* the first review's body, or NULL: the request's */
static size_t fixture_len;
static atomic_ulong copies, first_reviews;

static void
report(void)
{
    fprintf(stderr, "topogate-twice: %lu first reviews, %lu copies\n",
            atomic_load(&first_reviews), atomic_load(&copies));
}

static void
read_fixture(const char *name)
{
    char exe[4096], path[4096 + 256];
    FILE *f;

    snprintf(exe, sizeof(exe), "%s", program_invocation_name);
    snprintf(path, sizeof(path), "%s/../fixtures/%s.json", dirname(exe),
             name);
    if ((f = fopen(path, "rb")) == NULL ||
        (fixture = malloc(FIXTURE_MAX)) == NULL) {
        fprintf(stderr, "topogate-twice: %s: %s\n", path, strerror(errno));
        exit(3);
    }
    fixture_len = fread(fixture, 1, FIXTURE_MAX, f);
    fclose(f);
}

static void
read_mode(void)
{
    const char *name = program_invocation_short_name;
    size_t n = strlen(name);

    pthread_key_create(&scratch_key, free);
    atexit(report);
    copy_only = n >= 5 && strcmp(name + n - 5, "-copy") == 0;
    if (strncmp(name, FIRST_PREFIX, strlen(FIRST_PREFIX)) == 0)
        read_fixture(name + strlen(FIRST_PREFIX));
}

/* This thread's buffer of at least n bytes (grown, never shrunk). */
static char *
scratch(size_t n)
{
    size_t *have = pthread_getspecific(scratch_key);

    if (have == NULL || *have < n) {
        free(have);
        if ((have = malloc(sizeof(*have) + n)) == NULL) {
            pthread_setspecific(scratch_key, NULL);
            return NULL;
        }
        *have = n;
        pthread_setspecific(scratch_key, have);
    }
    return (char *)(have + 1);
}

/* Both reviews are read into the pool thread's arena, one after the
 * other, as two requests on one thread would be. */
int
__wrap_review_respond_in_place(struct jsonarena *arena,
                               const struct snapshot *s,
                               const struct view *view, char *body,
                               size_t len, struct review_result *out)
{
    const char *from = body;
    size_t n = len;
    struct review_result first;
    char *copy;

    pthread_once(&mode_once, read_mode);
    if (fixture != NULL) {
        from = fixture;
        n = fixture_len;
    }
    if ((copy = scratch(n + 1)) != NULL) {
        memcpy(copy, from, n);
        copy[n] = '\0';
        atomic_fetch_add(&copies, 1);
        if (!copy_only &&
            __real_review_respond_in_place(arena, s, view, copy, n,
                                           &first) == 0) {
            atomic_fetch_add(&first_reviews, 1);
            review_result_free(&first);
        }
    }
    return __real_review_respond_in_place(arena, s, view, body, len, out);
}
