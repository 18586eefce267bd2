/* jsonarena.c - the reader's arena: json/jsonread.h, json/jsonarena.h. */
#include "json/jsonarena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

#include "json/jsonread.h"

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
/* The largest block an arena keeps across a reset. */
#define ARENA_KEEP (1024 * 1024)
#define ARENA_ALIGN 16

struct block {
    struct block *prev; /* older, smaller blocks since the last reset */
    size_t size;        /* bytes in data */
    size_t used;
    alignas(ARENA_ALIGN) unsigned char data[];
};

struct jsonarena {
    struct block *top; /* the newest block, or NULL */
};

static void
block_free(struct block *b)
{
    ASAN_UNPOISON_MEMORY_REGION(b->data, b->size);
    free(b);
}

struct jsonarena *
jsonarena_new(void)
{
    return calloc(1, sizeof(struct jsonarena));
}

void
jsonarena_free(struct jsonarena *a)
{
    if (a == NULL)
        return;
    while (a->top != NULL) {
        struct block *prev = a->top->prev;

        block_free(a->top);
        a->top = prev;
    }
    free(a);
}

void *
jsonarena_alloc(struct jsonarena *a, size_t n)
{
    struct block *b = a->top;
    size_t need;
    void *p;

    if (n > SIZE_MAX / 4)
        return NULL;
    need = (n + ARENA_GAP + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (b == NULL || b->size - b->used < need) {
        size_t size = b != NULL ? 2 * b->size : ARENA_FIRST;

        while (size < need)
            size *= 2;
        if ((b = malloc(sizeof(*b) + size)) == NULL)
            return NULL;
        b->prev = a->top;
        b->size = size;
        b->used = 0;
        ASAN_POISON_MEMORY_REGION(b->data, size);
        a->top = b;
    }
    p = b->data + b->used;
    b->used += need;
    ASAN_UNPOISON_MEMORY_REGION(p, n);
    return p;
}

void
jsonarena_reset(struct jsonarena *a)
{
    struct block *keep;

    if (a == NULL || (keep = a->top) == NULL)
        return;
    /* The newest block is the largest: keep it unless it is too large. */
    while (keep->prev != NULL) {
        struct block *prev = keep->prev->prev;

        block_free(keep->prev);
        keep->prev = prev;
    }
    if (keep->size > ARENA_KEEP) {
        block_free(keep);
        a->top = NULL;
        return;
    }
    keep->used = 0;
    ASAN_POISON_MEMORY_REGION(keep->data, keep->size);
}
