/* budget.c - see budget.h. */
#include "webhook/budget.h"

bool
budget_take(struct budget *b, size_t n, size_t keep)
{
    size_t used = atomic_load_explicit(&b->used, memory_order_relaxed);
    size_t limit = keep < b->limit ? b->limit - keep : 0;
    size_t peak;

    do {
        if (n > limit || used > limit - n)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(
        &b->used, &used, used + n, memory_order_relaxed,
        memory_order_relaxed));
    used += n;
    peak = atomic_load_explicit(&b->peak, memory_order_relaxed);
    while (used > peak &&
           !atomic_compare_exchange_weak_explicit(&b->peak, &peak, used,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
    return true;
}

void
budget_give(struct budget *b, size_t n)
{
    atomic_fetch_sub_explicit(&b->used, n, memory_order_relaxed);
}
