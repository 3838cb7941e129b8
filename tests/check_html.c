/* check_html.c: the HTML page writer and the timeline it draws.
 * html_escape turns the five characters that mean something in HTML into
 * references and bad UTF-8 into U+FFFD; a page's text cannot end its
 * script early nor name an address; a timeline's bins take the tag that
 * spent the most time in them, or none when the stream was mostly idle
 * (expected spans worked out by hand below). */
#include <string.h>

#include "layout/layout.h"
#include "metrics/timeline.h"
#include "output/html.h"
#include "testutil.h"

START_TEST(test_escape)
{
    GString *out = g_string_new(NULL);
    /* "\xc3\xa9" is é, valid UTF-8, kept; "\xff" is no UTF-8 byte */
    html_escape(out, "a<b>&\"c'd \xc3\xa9 \xff");
    ck_assert_str_eq(out->str, "a&lt;b&gt;&amp;&quot;c&#39;d \xc3\xa9 \xef\xbf\xbd");
    g_string_free(out, TRUE);
}
END_TEST

/* Occurrences of `needle` in `text`. */
static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *at = strstr(text, needle); at; at = strstr(at + 1, needle))
        n++;
    return n;
}

START_TEST(test_page)
{
    HtmlPage *page = html_page_new("a <title>");
    HtmlFigure figure = {"step time", "1.5 s"};
    html_figures(page, &figure, 1);
    HtmlBar bars[] = {{"</script><b>", 2, "2 s"}, {"b", 1, "1 s"}};
    html_bars(page, "bars & more", bars, 2);
    HtmlColumn columns[] = {{"name", FALSE}, {"value", TRUE}};
    HtmlCell cells[] = {{"x<y", 0}, {"3", 3}};
    html_table(page, "table", columns, 2, cells, 1);
    char *html = html_page_render(page);
    html_page_free(page);
    ck_assert(strstr(html, "<title>a &lt;title&gt;</title>"));
    ck_assert(strstr(html, "<span class=\"value\">1.5 s</span>"));
    ck_assert(strstr(html, "<figcaption>bars &amp; more</figcaption>"));
    ck_assert(strstr(html, "<td>x&lt;y</td><td class=\"number\" data-v=\"3\">3</td>"));
    /* the label reaches the JSON with its '<' as \u003c: the page's two
     * scripts end where they should */
    ck_assert(strstr(html, "\"label\": \"\\u003c/script>\\u003cb>\""));
    ck_assert_int_eq(count(html, "</script>"), 2);
    /* one chart, one table, each for the script to draw */
    ck_assert_int_eq(count(html, "data-draw=\""), 2);
    ck_assert_int_eq(count(html, "://"), 0);
    ck_assert(strstr(html, "content=\"default-src 'none'; script-src 'unsafe-inline'; "
                           "style-src 'unsafe-inline'\""));
    g_free(html);
}
END_TEST

/* A 1 s step of one rank, 1000 bins of 1 ms. Compute: forward over
 * [0, 0.6), backward over [0.6, 1): spans [0, 600) and [600, 1000).
 * Comm: a dp task of 0.4 ms inside bin 200, idle for most of it (no
 * span), and one of 0.6 ms inside bin 500, busy for most of it: span
 * [500, 501). */
START_TEST(test_bins)
{
    Run run = run_new(test_gpt(4, 256, 8, 1024, 128), test_cluster(1, 1, 300e9, 25e9));
    test_resolve(run.plan, run.model, run.cluster);
    Layout *layout = layout_new(run.plan, run.cluster);
    Graph *g = graph_new(1, 2);
    TaskName name = {.fmt = "task"};
    struct {
        int stream;
        TaskTag tag;
        double start_s, end_s;
    } tasks[] = {{STREAM_COMPUTE, TAG_FORWARD, 0, 0.6},
                 {STREAM_COMPUTE, TAG_BACKWARD, 0.6, 1.0},
                 {STREAM_COMM, TAG_DP, 0.2001, 0.2005},
                 {STREAM_COMM, TAG_DP, 0.5002, 0.5008}};
    ReplayTask done[G_N_ELEMENTS(tasks)];
    for (gsize i = 0; i < G_N_ELEMENTS(tasks); i++) {
        TaskId id = graph_compute(g, 0, tasks[i].stream, tasks[i].end_s - tasks[i].start_s, 0,
                                  tasks[i].tag, name);
        done[id] = (ReplayTask){.start_s = tasks[i].start_s, .end_s = tasks[i].end_s};
    }
    ck_assert(graph_seal(g, NULL));
    Replay r = {.tasks = G_N_ELEMENTS(tasks), .ranks = 1, .task = done, .makespan_s = 1};
    Timeline t;
    timeline_compute(g, &r, layout, 0, 1.0, &t);
    ck_assert_int_eq(t.lanes->len, 2);
    const TimelineLane *compute = &g_array_index(t.lanes, TimelineLane, 0);
    const TimelineLane *comm = &g_array_index(t.lanes, TimelineLane, 1);
    ck_assert_int_eq(compute->stream, STREAM_COMPUTE);
    ck_assert_int_eq(compute->spans->len, 2);
    const TimelineSpan *fwd = &g_array_index(compute->spans, TimelineSpan, 0);
    const TimelineSpan *bwd = &g_array_index(compute->spans, TimelineSpan, 1);
    ck_assert(fwd->first == 0 && fwd->end == 600 && fwd->tag == TAG_FORWARD);
    ck_assert(bwd->first == 600 && bwd->end == 1000 && bwd->tag == TAG_BACKWARD);
    ck_assert_int_eq(comm->stream, STREAM_COMM);
    ck_assert_int_eq(comm->spans->len, 1);
    const TimelineSpan *dp = &g_array_index(comm->spans, TimelineSpan, 0);
    ck_assert(dp->first == 500 && dp->end == 501 && dp->tag == TAG_DP);
    char *forward = timeline_tag_name(TAG_FORWARD), *purpose = timeline_tag_name(TAG_DP);
    ck_assert_str_eq(forward, "forward");
    ck_assert_str_eq(purpose, "dp");
    g_free(forward);
    g_free(purpose);
    timeline_clear(&t);
    graph_free(g);
    layout_free(layout);
    run_free(&run);
}
END_TEST

Suite *suite_html(void)
{
    Suite *s = suite_create("html");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_escape);
    tcase_add_test(tc, test_page);
    tcase_add_test(tc, test_bins);
    suite_add_tcase(s, tc);
    return s;
}
