/* check_share.c: max-min fair sharing of links, the textbook cases
 * (Bertsekas and Gallager, Data Networks, section 6.5.2; SimGrid's tests
 * state the same shares). */
#include <math.h>

#include "core/share.h"
#include "testutil.h"

typedef struct {
    double end[16];
    int calls;
} Ends;

static void record(void *ctx, int id, double end_s, uint32_t version)
{
    Ends *e = ctx;
    (void)version;
    e->end[id] = end_s;
    e->calls++;
}

/* Two equal flows on one link get half each. */
START_TEST(two_flows_share_a_link_equally)
{
    double cap[1] = {100};
    Share *s = share_new(cap, 1, 1);
    int path[1] = {0};
    int a = share_start(s, 0, path, 1, 1000, 0, 0);
    int b = share_start(s, 0, path, 1, 1000, 0, 1);
    Ends e = {0};
    share_update(s, 0, record, &e);
    ck_assert_double_eq(share_rate(s, a), 50);
    ck_assert_double_eq(share_rate(s, b), 50);
    ck_assert_double_eq(e.end[a], 20); /* 1000 bytes at 50 B/s */
    /* when one ends the other gets the whole link: 1000 - 50 x 10 left */
    share_end(s, 10, a);
    share_update(s, 10, record, &e);
    ck_assert_double_eq(share_rate(s, b), 100);
    ck_assert_double_eq(e.end[b], 15);
    share_free(s);
}
END_TEST

/* A flow crossing a slow and a fast link runs at the slow one's rate. */
START_TEST(a_path_runs_at_its_slowest_link)
{
    double cap[2] = {10, 1000};
    Share *s = share_new(cap, 2, 1);
    int path[2] = {0, 1};
    int f = share_start(s, 0, path, 2, 100, 0, 0);
    Ends e = {0};
    share_update(s, 0, record, &e);
    ck_assert_double_eq(share_rate(s, f), 10);
    ck_assert_double_eq(e.end[f], 10);
    share_free(s);
}
END_TEST

/* Three flows: f0 over links 0 and 1, f1 over link 0, f2 over link 1;
 * capacities 1 and 2. Link 0 is the bottleneck of f0 and f1 (1/2 each);
 * link 1's spare capacity, 2 - 1/2, goes to f2, which it bottlenecks less. */
START_TEST(spare_capacity_goes_to_the_less_bottlenecked_flow)
{
    double cap[2] = {1, 2};
    Share *s = share_new(cap, 2, 1);
    int both[2] = {0, 1}, first[1] = {0}, second[1] = {1};
    int f0 = share_start(s, 0, both, 2, 1, 0, 0);
    int f1 = share_start(s, 0, first, 1, 1, 0, 1);
    int f2 = share_start(s, 0, second, 1, 1, 0, 2);
    Ends e = {0};
    share_update(s, 0, record, &e);
    ck_assert_double_eq(share_rate(s, f0), 0.5);
    ck_assert_double_eq(share_rate(s, f1), 0.5);
    ck_assert_double_eq(share_rate(s, f2), 1.5);
    share_free(s);
}
END_TEST

/* Only the flows connected to a change are recomputed: a flow on another
 * link keeps its rate and is not told anything. */
START_TEST(unconnected_flows_are_left_alone)
{
    double cap[2] = {10, 10};
    Share *s = share_new(cap, 2, 1);
    int l0[1] = {0}, l1[1] = {1};
    share_start(s, 0, l0, 1, 100, 0, 0);
    Ends e = {0};
    share_update(s, 0, record, &e);
    ck_assert_int_eq(e.calls, 1);
    share_start(s, 1, l1, 1, 100, 0, 1);
    share_update(s, 1, record, &e);
    ck_assert_int_eq(e.calls, 2); /* only the new flow */
    share_free(s);
}
END_TEST

/* Conservation: whatever the flows, no link carries more than its capacity
 * times the time. Flows of random paths start at random times and end when
 * their bytes are moved, as the engine would end them. */
START_TEST(links_never_carry_more_than_capacity)
{
    enum { LINKS = 6, FLOWS = 12 };
    double cap[LINKS] = {5, 10, 20, 7, 3, 50};
    Share *s = share_new(cap, LINKS, 2);
    Ends e = {0};
    srand(7);
    double now = 0;
    int live[FLOWS], n_live = 0;
    for (int step = 0; step < 400; step++) {
        double next_start = n_live == FLOWS ? INFINITY : now + (rand() % 100) / 10.0;
        int first = -1;
        for (int k = 0; k < n_live; k++)
            if (first < 0 || e.end[live[k]] < e.end[live[first]])
                first = k;
        if (first >= 0 && e.end[live[first]] <= next_start) {
            now = e.end[live[first]];
            share_end(s, now, live[first]);
            live[first] = live[--n_live];
        } else {
            now = next_start;
            int path[3], n = 1 + rand() % 3;
            for (int i = 0; i < n; i++)
                path[i] = (i * 2 + rand() % 2) % LINKS; /* distinct links */
            live[n_live++] = share_start(s, now, path, n, 1 + rand() % 200, rand() % 2, 0);
        }
        share_update(s, now, record, &e);
    }
    for (int l = 0; l < LINKS; l++) {
        ck_assert(share_link_bytes(s, l) > 0);
        ck_assert(share_link_bytes(s, l) <= cap[l] * now * (1 + 1e-12));
        ck_assert_rel(share_link_tag_bytes(s, l, 0) + share_link_tag_bytes(s, l, 1),
                      share_link_bytes(s, l), 1e-12);
    }
    share_free(s);
}
END_TEST

/* k copies of a flow (the same path, bytes and start: NCCL's channels of
 * one ring step, as net.c merges them) and one flow of weight k are the
 * same to their links. Links 0 (100 B/s) and 1 (300 B/s); 3 copies of
 * 600 bytes over both, and a flow of 600 bytes over link 1: link 0 is
 * the bottleneck of the copies, 100 / 3 B/s each (link 1's fair share is
 * 300 / 4), and the other flow takes link 1's 200 left, ending at 3 s;
 * the copies end at 600 / (100 / 3) = 18 s. Link 0 carries 1,800 bytes,
 * link 1 2,400. */
START_TEST(copies_of_a_flow_are_one_flow_of_their_weight)
{
    double cap[2] = {100, 300};
    int both[2] = {0, 1}, one[1] = {1};
    double three[2] = {3, 3};
    for (int merged = 0; merged < 2; merged++) {
        Share *s = share_new(cap, 2, 1);
        Ends e = {0};
        int copy = merged ? share_start_weighted(s, 0, both, three, 2, 600, 0, 0)
                          : share_start(s, 0, both, 2, 600, 0, 0);
        for (int k = 1; k < 3 && !merged; k++)
            share_start(s, 0, both, 2, 600, 0, 0);
        int other = share_start(s, 0, one, 1, 600, 0, 0);
        share_update(s, 0, record, &e);
        ck_assert_double_eq_tol(share_rate(s, copy), 100.0 / 3, 1e-12);
        for (int id = 1; id < 3 && !merged; id++)
            ck_assert_double_eq(share_rate(s, id), share_rate(s, copy));
        ck_assert_double_eq(share_rate(s, other), 200);
        ck_assert_double_eq(e.end[other], 3);
        share_end(s, 3, other);
        share_update(s, 3, record, &e);
        ck_assert_double_eq_tol(e.end[copy], 18, 1e-12);
        for (int id = 0; id < (merged ? 1 : 3); id++) /* copies are ids 0 .. 2 */
            share_end(s, e.end[copy], id);
        share_update(s, e.end[copy], record, &e);
        ck_assert_double_eq_tol(share_link_bytes(s, 0), 1800, 1e-9);
        ck_assert_double_eq_tol(share_link_bytes(s, 1), 2400, 1e-9);
        share_free(s);
    }
}
END_TEST

/* A link's share grows before it is the bottleneck. Link 0 (3 B/s) has
 * flows a, b, c; link 1 (10 B/s) a and d; link 2 (12 B/s) a, b, e, g.
 * Shares 1, 5 and 3: link 0 fixes a, b, c at 1; link 2 then has 10 B/s
 * left for e and g (5 each, its share grown from 3) and link 1 9 for d.
 * Every link is full: 1 + 1 + 1, 1 + 9, 1 + 1 + 5 + 5. */
START_TEST(a_share_that_grows_is_taken_at_its_latest)
{
    double cap[3] = {3, 10, 12};
    int a_path[3] = {0, 1, 2}, b_path[2] = {0, 2}, c_path[1] = {0}, d_path[1] = {1},
        eg_path[1] = {2};
    Share *s = share_new(cap, 3, 1);
    int a = share_start(s, 0, a_path, 3, 100, 0, 0);
    int b = share_start(s, 0, b_path, 2, 100, 0, 0);
    int c = share_start(s, 0, c_path, 1, 100, 0, 0);
    int d = share_start(s, 0, d_path, 1, 100, 0, 0);
    int e = share_start(s, 0, eg_path, 1, 100, 0, 0);
    int g = share_start(s, 0, eg_path, 1, 100, 0, 0);
    Ends ends = {0};
    share_update(s, 0, record, &ends);
    ck_assert_double_eq(share_rate(s, a), 1);
    ck_assert_double_eq(share_rate(s, b), 1);
    ck_assert_double_eq(share_rate(s, c), 1);
    ck_assert_double_eq(share_rate(s, d), 9);
    ck_assert_double_eq(share_rate(s, e), 5);
    ck_assert_double_eq(share_rate(s, g), 5);
    share_free(s);
}
END_TEST

/* A share that rounding makes fall. Link 0 (2 x fl(5 / 3) B/s) has flows
 * f and h, link 1 (5 B/s) h, i and j: both shares are fl(5 / 3), tied,
 * and link 0, met first, fixes f and h. Link 1's share is then
 * fl(fl(5 - fl(5 / 3)) / 2), one ulp below fl(5 / 3) in binary64 although
 * exactly 5 / 3: the rates are those of the filling done in that order,
 * to the bit. */
START_TEST(a_share_that_rounding_lowers_is_taken_as_rounded)
{
    volatile double third = 5.0 / 3; /* no folding: the sums below round as share.c's */
    double cap[2] = {2 * third, 5};
    int f_path[1] = {0}, h_path[2] = {0, 1}, ij_path[1] = {1};
    Share *s = share_new(cap, 2, 1);
    int f = share_start(s, 0, f_path, 1, 100, 0, 0);
    int h = share_start(s, 0, h_path, 2, 100, 0, 0);
    int i = share_start(s, 0, ij_path, 1, 100, 0, 0);
    int j = share_start(s, 0, ij_path, 1, 100, 0, 0);
    Ends ends = {0};
    share_update(s, 0, record, &ends);
    volatile double rest = (5 - third) / 2;
    ck_assert(rest < third); /* the premise: rounding lowers link 1's share */
    ck_assert_double_eq(share_rate(s, f), third);
    ck_assert_double_eq(share_rate(s, h), third);
    ck_assert_double_eq(share_rate(s, i), rest);
    ck_assert_double_eq(share_rate(s, j), rest);
    share_free(s);
}
END_TEST

Suite *suite_share(void)
{
    Suite *s = suite_create("share");
    TCase *tc = tcase_create("max-min");
    tcase_add_test(tc, two_flows_share_a_link_equally);
    tcase_add_test(tc, a_path_runs_at_its_slowest_link);
    tcase_add_test(tc, spare_capacity_goes_to_the_less_bottlenecked_flow);
    tcase_add_test(tc, unconnected_flows_are_left_alone);
    tcase_add_test(tc, links_never_carry_more_than_capacity);
    tcase_add_test(tc, copies_of_a_flow_are_one_flow_of_their_weight);
    tcase_add_test(tc, a_share_that_grows_is_taken_at_its_latest);
    tcase_add_test(tc, a_share_that_rounding_lowers_is_taken_as_rounded);
    suite_add_tcase(s, tc);
    return s;
}
