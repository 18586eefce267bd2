/* jsonarena.c - see jsonarena.h. */
#include "json/jsonarena.h"

#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

/*
 * Under AddressSanitizer every piece handed out is unpoisoned alone and
 * followed by a poisoned gap, and a reset poisons the block again: a read
 * past a string or into a dropped tree is still reported.
 */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define ARENA_GAP 16
#else
#define ASAN_POISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n) ((void)(p), (void)(n))
#define ARENA_GAP 0
#endif

/* A 6 KB review's tree takes about 30 KB; a 60 KB one about 300 KB. */
#define ARENA_FIRST (64 * 1024)
/* The largest block a thread keeps between reviews. */
#define ARENA_KEEP (1024 * 1024)
#define ARENA_ALIGN 16

struct block {
    struct block *prev; /* older, smaller blocks of the same review */
    size_t size;        /* bytes in data */
    size_t used;
    alignas(ARENA_ALIGN) unsigned char data[];
};

static _Thread_local struct block *arena_top; /* the newest block */
static _Thread_local bool arena_on;
static _Thread_local bool arena_failed;
/* A text read in place (jsonarena_adopt()): its strings are the tree's. */
static _Thread_local uintptr_t adopted_from, adopted_to;

static pthread_once_t arena_once = PTHREAD_ONCE_INIT;
static pthread_key_t arena_key; /* frees a pool thread's block at its exit */
static bool arena_ready;

static void
block_free(struct block *b)
{
    ASAN_UNPOISON_MEMORY_REGION(b->data, b->size);
    free(b);
}

static bool
in_arena(const void *p)
{
    uintptr_t a = (uintptr_t)p;

    if (a >= adopted_from && a < adopted_to)
        return true;
    for (const struct block *b = arena_top; b != NULL; b = b->prev)
        if (a >= (uintptr_t)b->data && a < (uintptr_t)b->data + b->size)
            return true;
    return false;
}

static void *
arena_alloc(size_t n)
{
    size_t need =
        (n + ARENA_GAP + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    struct block *b = arena_top;
    void *p;

    if (b == NULL || b->size - b->used < need) {
        size_t size = b != NULL ? 2 * b->size : ARENA_FIRST;

        while (size < need)
            size *= 2;
        if ((b = malloc(sizeof(*b) + size)) == NULL) {
            arena_failed = true;
            return NULL;
        }
        b->prev = arena_top;
        b->size = size;
        b->used = 0;
        ASAN_POISON_MEMORY_REGION(b->data, size);
        arena_top = b;
        pthread_setspecific(arena_key, b);
    }
    p = b->data + b->used;
    b->used += need;
    ASAN_UNPOISON_MEMORY_REGION(p, n);
    return p;
}

void *
jsonarena_malloc(size_t n)
{
    return arena_on ? arena_alloc(n) : malloc(n);
}

void
jsonarena_adopt(void *p, size_t n)
{
    adopted_from = (uintptr_t)p;
    adopted_to = (uintptr_t)p + n;
}

bool
jsonarena_active(void)
{
    return arena_on;
}

/* Pieces of the arena go with its reset; the rest is malloc()'s. */
static void
hook_free(void *p)
{
    if (p != NULL && !in_arena(p))
        free(p);
}

/* At a thread's exit: its blocks, which only it could reach. */
static void
arena_thread_exit(void *unused)
{
    (void)unused;
    while (arena_top != NULL) {
        struct block *prev = arena_top->prev;
        block_free(arena_top);
        arena_top = prev;
    }
}

static void
arena_install(void)
{
    cJSON_Hooks hooks = {.malloc_fn = jsonarena_malloc, .free_fn = hook_free};

    if (pthread_key_create(&arena_key, arena_thread_exit) != 0)
        return; /* no arena: cJSON keeps malloc() */
    /*
     * Outside an arena the hooks are malloc() and free() for every
     * thread, so a thread inside cJSON while they change is not affected.
     */
    cJSON_InitHooks(&hooks);
    arena_ready = true;
}

int
jsonarena_begin(void)
{
    pthread_once(&arena_once, arena_install);
    if (!arena_ready)
        return -1;
    arena_failed = false;
    arena_on = true;
    return 0;
}

bool
jsonarena_end(void)
{
    arena_on = false;
    return arena_failed;
}

void
jsonarena_reset(void)
{
    struct block *keep = arena_top;

    arena_on = false;
    adopted_from = adopted_to = 0;
    if (keep == NULL)
        return;
    /* The newest block is the largest: keep it unless it is too large. */
    while (keep->prev != NULL) {
        struct block *prev = keep->prev->prev;
        block_free(keep->prev);
        keep->prev = prev;
    }
    if (keep->size > ARENA_KEEP) {
        block_free(keep);
        arena_top = NULL;
        pthread_setspecific(arena_key, NULL);
        return;
    }
    keep->used = 0;
    ASAN_POISON_MEMORY_REGION(keep->data, keep->size);
}
