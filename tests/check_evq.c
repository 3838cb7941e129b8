/* check_evq.c: the event queue pops by time, then by push order. */
#include <math.h>
#include <stdlib.h>

#include "core/evq.h"
#include "testutil.h"

START_TEST(pops_in_time_order)
{
    EventQueue *q = evq_new(8);
    double times[] = {5, 1, 4, 2, 3};
    for (int i = 0; i < 5; i++)
        evq_push(q, times[i], i, 0);
    Event ev;
    double last = -1;
    for (int i = 0; i < 5; i++) {
        ck_assert(evq_pop(q, &ev));
        ck_assert_double_eq(ev.key, i + 1); /* 1, 2, 3, 4, 5 */
        ck_assert(ev.key > last);
        last = ev.key;
    }
    ck_assert(!evq_pop(q, &ev));
    evq_free(q);
}
END_TEST

START_TEST(ties_pop_in_push_order)
{
    EventQueue *q = evq_new(100);
    for (int i = 0; i < 100; i++)
        evq_push(q, 7.0, i, 0);
    Event ev;
    for (int i = 0; i < 100; i++) {
        ck_assert(evq_pop(q, &ev));
        ck_assert_int_eq(ev.payload, i);
    }
    evq_free(q);
}
END_TEST

/* Events pushed in time order and earlier ones mix (the run and the
 * heap of evq.c): the earliest comes first, the next time is the earliest's,
 * and evq_pop_until leaves what is due later. */
START_TEST(next_and_pop_until)
{
    EventQueue *q = evq_new(2);
    ck_assert(isinf(evq_next_s(q)));
    evq_push(q, 3.0, 0, 0);
    evq_push(q, 5.0, 1, 0);
    evq_push(q, 1.0, 2, 0); /* earlier than the last pushed */
    evq_push(q, 3.0, 3, 0); /* ties with the first, after it */
    ck_assert_double_eq(evq_next_s(q), 1.0);
    Event ev;
    ck_assert(!evq_pop_until(q, 0.5, &ev));
    ck_assert(evq_pop_until(q, 3.0, &ev) && ev.payload == 2);
    ck_assert(evq_pop_until(q, 3.0, &ev) && ev.payload == 0);
    ck_assert(evq_pop_until(q, 3.0, &ev) && ev.payload == 3);
    ck_assert(!evq_pop_until(q, 3.0, &ev));
    ck_assert_uint_eq(evq_size(q), 1);
    ck_assert_double_eq(evq_next_s(q), 5.0);
    evq_free(q);
}
END_TEST

/* Events pushed earlier than the run's first (evq.c's run front) and ties
 * with it (the heap) still pop by time, then push order; evq_pop_before
 * pops only what is due strictly earlier than its time. */
START_TEST(pop_before_is_strict)
{
    EventQueue *q = evq_new(2);
    evq_push(q, 5.0, 0, 0);
    evq_push(q, 4.0, 1, 0); /* earlier than every event so far */
    evq_push(q, 4.0, 2, 0); /* ties with the earliest, after it */
    evq_push(q, 3.0, 3, 0);
    Event ev;
    ck_assert(!evq_pop_before(q, 3.0, &ev));
    ck_assert(evq_pop_before(q, 3.5, &ev) && ev.payload == 3);
    ck_assert(!evq_pop_before(q, 4.0, &ev));
    ck_assert(evq_pop_before(q, 4.5, &ev) && ev.payload == 1);
    ck_assert(evq_pop_before(q, 4.5, &ev) && ev.payload == 2);
    ck_assert(evq_pop_before(q, INFINITY, &ev) && ev.payload == 0);
    ck_assert(!evq_pop_before(q, INFINITY, &ev));
    evq_free(q);
}
END_TEST

/* Interleaved pushes and pops against a reference: the popped sequence of
 * (time, payload) must be the one a stable sort by time gives among the
 * events present. A linear scan for the earliest is the reference. */
START_TEST(matches_reference_under_interleaving)
{
    enum { N = 2000 };
    EventQueue *q = evq_new(1); /* grows as it fills */
    Event ref[N];
    int nref = 0;
    uint64_t seq = 0;
    srand(12345);
    for (int step = 0; step < 3 * N; step++) {
        gboolean push = nref == 0 || (nref < N && rand() % 3 != 0);
        if (push) {
            double t = (double)(rand() % 50);
            evq_push(q, t, step, 0);
            ref[nref++] = (Event){t, seq++, step, 0};
            continue;
        }
        int best = 0;
        for (int i = 1; i < nref; i++)
            if (ref[i].key < ref[best].key ||
                (ref[i].key == ref[best].key && ref[i].seq < ref[best].seq))
                best = i;
        Event ev;
        Event top;
        ck_assert(evq_peek(q, &top));
        ck_assert(evq_pop(q, &ev));
        ck_assert_int_eq(top.payload, ev.payload);
        ck_assert_double_eq(ev.key, ref[best].key);
        ck_assert_int_eq(ev.payload, ref[best].payload);
        ref[best] = ref[--nref];
        ck_assert_uint_eq(evq_size(q), (unsigned)nref);
    }
    evq_free(q);
}
END_TEST

Suite *suite_evq(void)
{
    Suite *s = suite_create("evq");
    TCase *tc = tcase_create("heap");
    tcase_add_test(tc, pops_in_time_order);
    tcase_add_test(tc, ties_pop_in_push_order);
    tcase_add_test(tc, next_and_pop_until);
    tcase_add_test(tc, pop_before_is_strict);
    tcase_add_test(tc, matches_reference_under_interleaving);
    suite_add_tcase(s, tc);
    return s;
}
