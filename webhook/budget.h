/*
 * budget.h - a count of bytes in flight with a ceiling, shared by threads.
 *
 * The admission listener charges every request body's buffer here before
 * it grows: past the ceiling a request is refused (503) instead of the
 * process growing until the kernel kills it. Lock-free: one atomic
 * compare-and-swap per charge. A zeroed struct budget with limit set is
 * ready; nothing to free.
 */
#ifndef TOPOGATE_BUDGET_H
#define TOPOGATE_BUDGET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct budget {
    size_t limit;
    atomic_size_t used;
    atomic_size_t peak; /* the most ever used: for the log and tests */
};

/*
 * Charges n bytes: true, or false (nothing charged) when that would leave
 * less than keep of the limit free.
 */
bool budget_take(struct budget *b, size_t n, size_t keep);

/* Gives back n bytes charged before. */
void budget_give(struct budget *b, size_t n);

#endif
