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
#define ARENA_ALIGN 16

struct block {
    struct block *prev; /* older, smaller blocks since the last reset */
    size_t size;        /* bytes in data */
    size_t used;
    alignas(ARENA_ALIGN) unsigned char data[];
};

struct jsonarena {
    struct block *top; /* the newest block, or NULL */
    size_t next;       /* the first block's size after a reset, or 0 */
    unsigned quiet;    /* resets in a row that used a quarter of top */
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
        size_t size = b != NULL ? 2 * b->size
                      : a->next > 0 ? a->next
                                    : ARENA_FIRST;

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

/*
 * Blocks are mapped fresh past malloc's mmap threshold (64 KiB in serve,
 * webhook/server.c), so a read that needed a chain of blocks would map
 * and unmap them all again each time: a 1 MiB review's 3.4 MB tree was
 * a thousand page faults a review. A reset therefore keeps one block: the
 * one there is when a single block held the read, else it frees the chain
 * and the next read starts with one block as large as the chain's use
 * (and an eighth more), up to JSONARENA_KEEP. Past that, or after
 * JSONARENA_QUIET reads in a row that used at most a quarter of a large
 * block, the arena starts again from ARENA_FIRST: memory follows the
 * reads of late, not the largest ever seen.
 */
void
jsonarena_reset(struct jsonarena *a)
{
    struct block *keep;
    size_t used = 0;

    if (a == NULL || (keep = a->top) == NULL)
        return;
    for (struct block *b = keep; b != NULL; b = b->prev)
        used += b->used;
    if (keep->prev != NULL || keep->size > JSONARENA_KEEP) {
        size_t want = used + used / 8;

        while (a->top != NULL) {
            struct block *prev = a->top->prev;

            block_free(a->top);
            a->top = prev;
        }
        want = (want + ARENA_FIRST - 1) & ~(size_t)(ARENA_FIRST - 1);
        a->next = want <= JSONARENA_KEEP ? want : 0;
        a->quiet = 0;
        return;
    }
    if (keep->size > ARENA_FIRST && used <= keep->size / 4 &&
        ++a->quiet >= JSONARENA_QUIET) {
        block_free(keep);
        a->top = NULL;
        a->next = 0;
        a->quiet = 0;
        return;
    }
    if (used > keep->size / 4)
        a->quiet = 0;
    keep->used = 0;
    ASAN_POISON_MEMORY_REGION(keep->data, keep->size);
}

size_t
jsonarena_held(const struct jsonarena *a)
{
    size_t n = 0;

    if (a == NULL)
        return 0;
    for (const struct block *b = a->top; b != NULL; b = b->prev)
        n += b->size;
    return n;
}
