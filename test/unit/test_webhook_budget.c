/*
 * The body budget (webhook/budget.c): a charge past the limit is refused
 * whole, the part kept for others is left free, and threads charging and
 * giving back at once end where they began.
 */
#include <pthread.h>

#include "test/unit/check.h"
#include "webhook/budget.h"

static void
test_limits(void)
{
    struct budget b = {.limit = 100};

    CHECK(budget_take(&b, 60, 0));
    CHECK(!budget_take(&b, 41, 0)); /* refused whole, nothing charged */
    CHECK_INT(atomic_load(&b.used), 60);
    CHECK(!budget_take(&b, 31, 10)); /* would leave less than 10 free */
    CHECK(budget_take(&b, 30, 10));
    CHECK(budget_take(&b, 10, 0)); /* the kept part, for a first piece */
    CHECK(!budget_take(&b, 1, 0));
    CHECK(!budget_take(&b, 1, 200)); /* keep over the limit: nothing */
    budget_give(&b, 100);
    CHECK_INT(atomic_load(&b.used), 0);
    CHECK_INT(atomic_load(&b.peak), 100);
    CHECK(!budget_take(&b, 101, 0));
    CHECK(!budget_take(&b, (size_t)-1, 0)); /* no wrap-around */
}

static struct budget shared = {.limit = 1000};

static void *
churn(void *arg)
{
    long refused = 0;

    (void)arg;
    for (int i = 0; i < 100000; i++) {
        if (budget_take(&shared, 7, 0))
            budget_give(&shared, 7);
        else
            refused++;
    }
    return (void *)refused;
}

static void
test_threads(void)
{
    pthread_t t[8];

    for (int i = 0; i < 8; i++)
        CHECK_INT(pthread_create(&t[i], NULL, churn, NULL), 0);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    CHECK_INT(atomic_load(&shared.used), 0);
    CHECK(atomic_load(&shared.peak) <= 8 * 7);
}

int
main(void)
{
    test_limits();
    test_threads();
    CHECK_DONE();
}
