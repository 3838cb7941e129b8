/* html.h: a report as one self-contained HTML page (--html FILE), for a
 * team to open in a browser and pass around.
 *
 * A page is built top to bottom: a title, headline figures, paragraphs,
 * tables and charts. Everything it needs is inside the file: its style
 * sheet, a short script, and the charts' data as JSON in a
 * <script type="application/json">, which the script draws as inline SVG.
 * It names no other file, font or address, and its Content-Security-Policy
 * forbids the browser to fetch any (default-src 'none'). Text reaches the
 * page escaped (html_escape) or, in the charts' data, as JSON that the
 * script sets as text, never as markup. The script marks each chart it has
 * drawn with data-drawn="N", N the marks drawn (bars, spans), so that a
 * test can tell a drawn chart from an empty one. The same page gives the
 * same bytes. */
#ifndef PLANSIM_OUTPUT_HTML_H
#define PLANSIM_OUTPUT_HTML_H

#include <glib.h>

#include "metrics/timeline.h"

typedef struct HtmlPage HtmlPage;

/* An empty page titled `title`. */
HtmlPage *html_page_new(const char *title);
void html_page_free(HtmlPage *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HtmlPage, html_page_free)

/* Appends `text` to `out` as HTML text or an attribute's value: & < > "
 * and ' become character references; invalid UTF-8 becomes U+FFFD. */
void html_escape(GString *out, const char *text);

/* A section heading. */
void html_heading(HtmlPage *p, const char *text);

/* A paragraph; `pre`: kept as written, in a fixed-width font (a command,
 * a table of text). */
void html_paragraph(HtmlPage *p, const char *text, gboolean pre);

/* A row of headline figures, the first larger than the rest. */
typedef struct {
    const char *label; /* "step time" */
    const char *value; /* "13.62 s" */
} HtmlFigure;
void html_figures(HtmlPage *p, const HtmlFigure *figures, int n);

/* A table of `rows` rows of `n_columns` cells (cells[row * n_columns +
 * column]) whose readers may sort it by any column, by clicking its
 * heading: a column with `numeric` set by the cells' values, the others by
 * their text. */
typedef struct {
    const char *text;
    double value; /* a numeric column's sort key */
} HtmlCell;
typedef struct {
    const char *name;
    gboolean numeric;
} HtmlColumn;
void html_table(HtmlPage *p, const char *title, const HtmlColumn *columns, int n_columns,
                const HtmlCell *cells, int rows);

/* A horizontal bar chart: a bar per item, its length the value, labelled
 * with `text`. */
typedef struct {
    const char *label;
    double value;
    const char *text; /* "1.039 s (7.6 %)" */
} HtmlBar;
void html_bars(HtmlPage *p, const char *title, const HtmlBar *bars, int n);

/* Stacked columns: a column per label, of `n_series` parts each
 * (values[column * n_series + part], in `unit`), and a dashed line at
 * `limit` (<= 0: none) named `limit_label`. */
typedef struct {
    const char *title, *unit;
    const char *const *series;
    int n_series;
    const char *const *labels;
    int n_labels;
    const double *values;
    double limit;
    const char *limit_label;
} HtmlStacks;
void html_stacks(HtmlPage *p, const HtmlStacks *s);

/* The timeline `t` (metrics/timeline.h): a lane per rank's stream, a
 * colour per tag, the critical rank's lanes marked. */
void html_timeline(HtmlPage *p, const char *title, const Timeline *t);

/* The page, newly allocated. */
char *html_page_render(const HtmlPage *p);

#endif
