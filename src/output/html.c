/* html.c: the HTML page writer (html.h).
 *
 * A page is two buffers filled in order: the body's markup, every text in
 * it escaped, and the charts' data, a JSON list (one chart a line) that
 * the body's <figure data-draw="KIND" data-chart="I"> placeholders index
 * (each chart's object written by a JsonWriter of its own).
 * Rendering wraps them in the document, the style sheet and the script
 * below; the JSON goes inside a <script> element, where only "</" could
 * end it early, so every '<' in it is written as \u003c (it appears only
 * inside JSON strings, where that escape means the same character). */
#include "output/html.h"

#include <math.h>
#include <string.h>

#include "base/jsonw.h"

struct HtmlPage {
    char *title;
    GString *body;
    GString *charts; /* the charts' JSON objects, separated by ",\n" */
    JsonWriter json; /* writing the last one */
    int n_charts;
};

/* The style sheet: system fonts only, so nothing is fetched. */
static const char style[] =
    "body { font: 15px/1.45 system-ui, sans-serif; color: #222; }\n"
    "body { max-width: 62em; margin: 2em auto; padding: 0 1em; }\n"
    "h1 { font-size: 1.5em; margin-bottom: 0.2em; }\n"
    "h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ddd; }\n"
    ".figures { display: flex; flex-wrap: wrap; gap: 0.6em 2.2em; margin: 1em 0; }\n"
    ".figure .label { display: block; color: #666; font-size: 0.85em; }\n"
    ".figure .value { font-size: 1.3em; font-weight: 600; }\n"
    ".figure:first-child .value { font-size: 2.4em; }\n"
    "pre { background: #f5f5f5; padding: 0.6em; white-space: pre-wrap; }\n"
    "figure { margin: 1em 0; }\n"
    "figcaption { font-weight: 600; margin-bottom: 0.3em; }\n"
    "svg { max-width: 100%; height: auto; font-size: 12px; }\n"
    "svg text { fill: #333; }\n"
    "svg text.critical { font-weight: 700; }\n"
    "svg .grid { stroke: #e4e4e4; }\n"
    "svg .limit { stroke: #c00; stroke-dasharray: 5 4; }\n"
    "svg .lane { fill: #f4f4f4; }\n"
    "table { border-collapse: collapse; font-size: 0.9em; }\n"
    "th, td { padding: 0.25em 0.6em; border-bottom: 1px solid #eee; }\n"
    "th, td { text-align: left; vertical-align: top; }\n"
    "td.number { text-align: right; white-space: nowrap; }\n"
    "th { cursor: pointer; user-select: none; background: #f5f5f5; }\n"
    "th[aria-sort=ascending]::after { content: ' \\25B2'; }\n"
    "th[aria-sort=descending]::after { content: ' \\25BC'; }\n";

/* The script: draws the charts from their JSON as SVG, sorts the tables. */
static const char script[] =
    "// Draws each <figure data-draw> from its entry of the JSON list #charts\n"
    "// as inline SVG, makes each <table data-draw> sortable by its headings,\n"
    "// and marks each with data-drawn: the marks drawn, or the rows sorted.\n"
    "(function () {\n"
    "  'use strict';\n"
    "  var charts = JSON.parse(document.getElementById('charts').textContent);\n"
    "  // the SVG namespace, as the HTML parser gives it to an inline <svg>\n"
    "  var probe = document.createElement('div');\n"
    "  probe.innerHTML = '<svg></svg>';\n"
    "  var NS = probe.firstChild.namespaceURI;\n"
    "  var COLOURS = ['#4e79a7', '#59a14f', '#edc948', '#b07aa1', '#bab0ac', '#9c755f',\n"
    "                 '#86bcb6', '#f28e2b', '#e15759', '#76b7b2', '#ff9da7', '#8cd17d',\n"
    "                 '#d37295', '#499894', '#fabfd2'];\n"
    "  var WIDTH = 760;\n"
    "  function colour(i) { return COLOURS[i % COLOURS.length]; }\n"
    "\n"
    "  function el(parent, name, attrs, text) {\n"
    "    var e = document.createElementNS(NS, name);\n"
    "    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });\n"
    "    if (text !== undefined) e.textContent = text;\n"
    "    parent.appendChild(e);\n"
    "    return e;\n"
    "  }\n"
    "  function picture(figure, height) {\n"
    "    return el(figure, 'svg', {viewBox: '0 0 ' + WIDTH + ' ' + height, width: WIDTH,\n"
    "                              height: height, role: 'img'});\n"
    "  }\n"
    "  function short(v) { return String(+v.toPrecision(3)); }\n"
    "  // about `count` round ticks from 0 to max: 1, 2 or 5 times a power of ten apart\n"
    "  function ticks(max, count) {\n"
    "    if (!(max > 0)) return [0];\n"
    "    var raw = max / count, p = Math.pow(10, Math.floor(Math.log10(raw))), out = [];\n"
    "    var step = [1, 2, 5, 10].map(function (m) { return m * p; })\n"
    "                            .filter(function (s) { return s >= raw; })[0];\n"
    "    for (var t = 0; t <= max * (1 + 1e-9); t += step) out.push(t);\n"
    "    return out;\n"
    "  }\n"
    "  // a row of [name, colour index] entries at height y\n"
    "  function legend(svg, y, entries) {\n"
    "    var x = 0;\n"
    "    entries.forEach(function (entry) {\n"
    "      var name = entry[0];\n"
    "      el(svg, 'rect', {x: x, y: y, width: 11, height: 11, fill: colour(entry[1])});\n"
    "      el(svg, 'text', {x: x + 15, y: y + 10}, name);\n"
    "      x += 24 + 7 * name.length;\n"
    "    });\n"
    "  }\n"
    "\n"
    "  var draw = {\n"
    "    bars: function (figure, c) {\n"
    "      var LEFT = 210, RIGHT = 170, ROW = 22;\n"
    "      var values = c.bars.map(function (b) { return b.value; });\n"
    "      var max = Math.max.apply(null, values.concat([0]));\n"
    "      var svg = picture(figure, c.bars.length * ROW + 4);\n"
    "      c.bars.forEach(function (b, i) {\n"
    "        var y = i * ROW + 2;\n"
    "        var w = max > 0 ? (WIDTH - LEFT - RIGHT) * Math.max(b.value, 0) / max : 0;\n"
    "        el(svg, 'text', {x: LEFT - 8, y: y + 15, 'text-anchor': 'end'}, b.label);\n"
    "        var bar = el(svg, 'rect', {x: LEFT, y: y + 3, width: w, height: ROW - 6,\n"
    "                                   fill: colour(i)});\n"
    "        el(bar, 'title', {}, b.label + ': ' + b.text);\n"
    "        el(svg, 'text', {x: LEFT + w + 6, y: y + 15}, b.text);\n"
    "      });\n"
    "      return c.bars.length;\n"
    "    },\n"
    "    stacks: function (figure, c) {\n"
    "      var LEFT = 60, TOP = 12, PLOT = 220, marks = 0;\n"
    "      var n = c.labels.length, k = c.series.length;\n"
    "      var max = Math.max(c.limit, 0);\n"
    "      for (var i = 0; i < n; i++) {\n"
    "        var total = 0;\n"
    "        for (var j = 0; j < k; j++) total += c.values[i * k + j];\n"
    "        max = Math.max(max, total);\n"
    "      }\n"
    "      if (max <= 0) max = 1;\n"
    "      var svg = picture(figure, TOP + PLOT + 60);\n"
    "      var y = function (v) { return TOP + PLOT * (1 - v / max); };\n"
    "      var slot = (WIDTH - LEFT - 10) / n;\n"
    "      ticks(max, 5).forEach(function (t) {\n"
    "        el(svg, 'line', {x1: LEFT, x2: WIDTH - 10, y1: y(t), y2: y(t), class: 'grid'});\n"
    "        el(svg, 'text', {x: LEFT - 6, y: y(t) + 4, 'text-anchor': 'end'}, short(t));\n"
    "      });\n"
    "      el(svg, 'text', {x: 0, y: TOP - 2}, c.unit);\n"
    "      for (i = 0; i < n; i++) {\n"
    "        var base = 0, x = LEFT + i * slot + slot * 0.15;\n"
    "        for (j = 0; j < k; j++) {\n"
    "          var v = c.values[i * k + j];\n"
    "          if (v <= 0) continue;\n"
    "          var part = el(svg, 'rect', {x: x, y: y(base + v), width: slot * 0.7,\n"
    "                                      height: y(base) - y(base + v), fill: colour(j)});\n"
    "          el(part, 'title', {},\n"
    "             c.labels[i] + ' ' + c.series[j] + ': ' + short(v) + ' ' + c.unit);\n"
    "          base += v;\n"
    "          marks++;\n"
    "        }\n"
    "        el(svg, 'text', {x: x + slot * 0.35, y: TOP + PLOT + 16, 'text-anchor': 'middle'},\n"
    "           c.labels[i]);\n"
    "      }\n"
    "      if (c.limit > 0) {\n"
    "        var at = y(c.limit);\n"
    "        el(svg, 'line', {x1: LEFT, x2: WIDTH - 10, y1: at, y2: at, class: 'limit'});\n"
    "        el(svg, 'text', {x: WIDTH - 10, y: at - 4, 'text-anchor': 'end'}, c.limit_label);\n"
    "      }\n"
    "      legend(svg, TOP + PLOT + 32, c.series.map(function (name, j) { return [name, j]; }));\n"
    "      return marks;\n"
    "    },\n"
    "    timeline: function (figure, c) {\n"
    "      var LEFT = 190, TOP = 4, LANE = 20, marks = 0, used = [];\n"
    "      var plot = WIDTH - LEFT - 10, height = TOP + c.lanes.length * LANE;\n"
    "      var svg = picture(figure, height + 60);\n"
    "      var x = function (bin) { return LEFT + plot * bin / c.bins; };\n"
    "      c.lanes.forEach(function (lane, i) {\n"
    "        var y = TOP + i * LANE;\n"
    "        el(svg, 'text', {x: LEFT - 8, y: y + 14, 'text-anchor': 'end',\n"
    "                         class: lane.critical ? 'critical' : ''}, lane.label);\n"
    "        el(svg, 'rect', {x: LEFT, y: y + 2, width: plot, height: LANE - 4, class: 'lane'});\n"
    "        lane.spans.forEach(function (s) {\n"
    "          var span = el(svg, 'rect', {x: x(s[0]), y: y + 2, width: x(s[1]) - x(s[0]),\n"
    "                                      height: LANE - 4, fill: colour(s[2])});\n"
    "          var from = short(c.end_s * s[0] / c.bins), to = short(c.end_s * s[1] / c.bins);\n"
    "          el(span, 'title', {}, c.classes[s[2]] + ' ' + from + '-' + to + ' s');\n"
    "          used[s[2]] = true;\n"
    "          marks++;\n"
    "        });\n"
    "      });\n"
    "      ticks(c.end_s, 8).forEach(function (t) {\n"
    "        var at = x(c.bins * t / c.end_s);\n"
    "        el(svg, 'line', {x1: at, x2: at, y1: TOP, y2: height + 4, class: 'grid'});\n"
    "        el(svg, 'text', {x: at, y: height + 18, 'text-anchor': 'middle'}, short(t));\n"
    "      });\n"
    "      el(svg, 'text', {x: LEFT - 8, y: height + 18, 'text-anchor': 'end'}, 'seconds');\n"
    "      var entries = [];\n"
    "      used.forEach(function (u, tag) { entries.push([c.classes[tag], tag]); });\n"
    "      legend(svg, height + 34, entries);\n"
    "      return marks;\n"
    "    }\n"
    "  };\n"
    "\n"
    "  function sortable(table) {\n"
    "    var body = table.tBodies[0];\n"
    "    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {\n"
    "      th.addEventListener('click', function () {\n"
    "        var down = th.getAttribute('aria-sort') === 'ascending';\n"
    "        var key = function (row) {\n"
    "          var cell = row.cells[column];\n"
    "          return th.dataset.numeric ? parseFloat(cell.dataset.v) : cell.textContent;\n"
    "        };\n"
    "        var rows = Array.prototype.slice.call(body.rows);\n"
    "        rows.sort(function (a, b) {\n"
    "          var p = key(a), q = key(b), order = p < q ? -1 : p > q ? 1 : 0;\n"
    "          return down ? -order : order;\n"
    "        });\n"
    "        rows.forEach(function (row) { body.appendChild(row); });\n"
    "        Array.prototype.forEach.call(th.parentNode.cells, function (h) {\n"
    "          h.removeAttribute('aria-sort');\n"
    "        });\n"
    "        th.setAttribute('aria-sort', down ? 'descending' : 'ascending');\n"
    "      });\n"
    "    });\n"
    "    return body.rows.length;\n"
    "  }\n"
    "\n"
    "  Array.prototype.forEach.call(document.querySelectorAll('[data-draw]'), function (node) {\n"
    "    var kind = node.dataset.draw;\n"
    "    var chart = charts[+node.dataset.chart];\n"
    "    var n = kind === 'table' ? sortable(node) : draw[kind](node, chart);\n"
    "    node.setAttribute('data-drawn', n);\n"
    "  });\n"
    "})();\n";

HtmlPage *html_page_new(const char *title)
{
    HtmlPage *p = g_new0(HtmlPage, 1);
    p->title = g_strdup(title);
    p->body = g_string_new(NULL);
    p->charts = g_string_new(NULL);
    return p;
}

void html_page_free(HtmlPage *p)
{
    if (!p)
        return;
    g_free(p->title);
    g_string_free(p->body, TRUE);
    g_string_free(p->charts, TRUE);
    g_free(p);
}

void html_escape(GString *out, const char *text)
{
    g_autofree char *valid = g_utf8_make_valid(text, -1);
    for (const char *c = valid; *c; c++) {
        switch (*c) {
        case '&':
            g_string_append(out, "&amp;");
            break;
        case '<':
            g_string_append(out, "&lt;");
            break;
        case '>':
            g_string_append(out, "&gt;");
            break;
        case '"':
            g_string_append(out, "&quot;");
            break;
        case '\'':
            g_string_append(out, "&#39;");
            break;
        default:
            g_string_append_c(out, *c);
        }
    }
}

/* Appends <tag>text</tag> and a newline. */
static void element(GString *out, const char *tag, const char *text)
{
    g_string_append_printf(out, "<%s>", tag);
    html_escape(out, text);
    g_string_append_printf(out, "</%s>\n", tag);
}

void html_heading(HtmlPage *p, const char *text)
{
    element(p->body, "h2", text);
}

void html_paragraph(HtmlPage *p, const char *text, gboolean pre)
{
    element(p->body, pre ? "pre" : "p", text);
}

void html_figures(HtmlPage *p, const HtmlFigure *figures, int n)
{
    g_string_append(p->body, "<div class=\"figures\">\n");
    for (int i = 0; i < n; i++) {
        g_string_append(p->body, "<div class=\"figure\"><span class=\"label\">");
        html_escape(p->body, figures[i].label);
        g_string_append(p->body, "</span><span class=\"value\">");
        html_escape(p->body, figures[i].value);
        g_string_append(p->body, "</span></div>\n");
    }
    g_string_append(p->body, "</div>\n");
}

void html_table(HtmlPage *p, const char *title, const HtmlColumn *columns, int n_columns,
                const HtmlCell *cells, int rows)
{
    GString *b = p->body;
    element(b, "h2", title);
    g_string_append(b, "<table data-draw=\"table\">\n<thead><tr>");
    for (int c = 0; c < n_columns; c++) {
        g_string_append(b, columns[c].numeric ? "<th data-numeric=\"1\">" : "<th>");
        html_escape(b, columns[c].name);
        g_string_append(b, "</th>");
    }
    g_string_append(b, "</tr></thead>\n<tbody>\n");
    for (int r = 0; r < rows; r++) {
        g_string_append(b, "<tr>");
        for (int c = 0; c < n_columns; c++) {
            const HtmlCell *cell = &cells[r * n_columns + c];
            if (columns[c].numeric) /* %.17g: the sort key exactly */
                g_string_append_printf(b, "<td class=\"number\" data-v=\"%.17g\">",
                                       isfinite(cell->value) ? cell->value : 0);
            else
                g_string_append(b, "<td>");
            html_escape(b, cell->text);
            g_string_append(b, "</td>");
        }
        g_string_append(b, "</tr>\n");
    }
    g_string_append(b, "</tbody>\n</table>\n");
}

/* Opens the next chart of `kind`: its placeholder in the body, under
 * `title`, and its JSON object, left open for its data. */
static JsonWriter *chart(HtmlPage *p, const char *kind, const char *title)
{
    g_string_append_printf(p->body, "<figure data-draw=\"%s\" data-chart=\"%d\"><figcaption>", kind,
                           p->n_charts++);
    html_escape(p->body, title);
    g_string_append(p->body, "</figcaption></figure>\n");
    if (p->n_charts > 1)
        g_string_append(p->charts, ",\n");
    jsonw_init(&p->json, p->charts);
    jsonw_begin_object(&p->json, JSONW_COMPACT);
    jsonw_string(jsonw_key(&p->json, "kind"), kind);
    return &p->json;
}

void html_bars(HtmlPage *p, const char *title, const HtmlBar *bars, int n)
{
    JsonWriter *w = chart(p, "bars", title);
    jsonw_begin_list(jsonw_key(w, "bars"), JSONW_COMPACT);
    for (int i = 0; i < n; i++) {
        jsonw_begin_object(w, JSONW_COMPACT);
        jsonw_string(jsonw_key(w, "label"), bars[i].label);
        jsonw_number(jsonw_key(w, "value"), bars[i].value);
        jsonw_string(jsonw_key(w, "text"), bars[i].text);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_end(w);
}

static void strings(JsonWriter *w, const char *key, const char *const *s, int n)
{
    jsonw_begin_list(jsonw_key(w, key), JSONW_COMPACT);
    for (int i = 0; i < n; i++)
        jsonw_string(w, s[i]);
    jsonw_end(w);
}

void html_stacks(HtmlPage *p, const HtmlStacks *s)
{
    JsonWriter *w = chart(p, "stacks", s->title);
    jsonw_string(jsonw_key(w, "unit"), s->unit);
    strings(w, "series", s->series, s->n_series);
    strings(w, "labels", s->labels, s->n_labels);
    jsonw_begin_list(jsonw_key(w, "values"), JSONW_COMPACT);
    for (int i = 0; i < s->n_series * s->n_labels; i++)
        jsonw_number(w, s->values[i]);
    jsonw_end(w);
    jsonw_number(jsonw_key(w, "limit"), s->limit);
    jsonw_string(jsonw_key(w, "limit_label"), s->limit_label ? s->limit_label : "");
    jsonw_end(w);
}

void html_timeline(HtmlPage *p, const char *title, const Timeline *t)
{
    JsonWriter *w = chart(p, "timeline", title);
    jsonw_number(jsonw_key(w, "end_s"), t->step_time_s);
    jsonw_int(jsonw_key(w, "bins"), TIMELINE_BINS);
    jsonw_begin_list(jsonw_key(w, "classes"), JSONW_COMPACT);
    for (int tag = 0; tag < TAG_KINDS; tag++) {
        g_autofree char *name = timeline_tag_name((TaskTag)tag);
        jsonw_string(w, name);
    }
    jsonw_end(w);
    jsonw_begin_list(jsonw_key(w, "lanes"), JSONW_COMPACT);
    for (guint i = 0; i < t->lanes->len; i++) {
        const TimelineLane *lane = &g_array_index(t->lanes, TimelineLane, i);
        g_autofree char *label = g_strdup_printf("GPU %d (stage %d) %s", lane->gpu, lane->stage,
                                                 emit_stream_name(lane->stream));
        jsonw_begin_object(w, JSONW_COMPACT);
        jsonw_string(jsonw_key(w, "label"), label);
        jsonw_bool(jsonw_key(w, "critical"), lane->gpu == t->critical_gpu);
        jsonw_begin_list(jsonw_key(w, "spans"), JSONW_COMPACT);
        for (guint k = 0; k < lane->spans->len; k++) {
            const TimelineSpan *s = &g_array_index(lane->spans, TimelineSpan, k);
            jsonw_begin_list(w, JSONW_COMPACT);
            jsonw_int(w, s->first);
            jsonw_int(w, s->end);
            jsonw_int(w, s->tag);
            jsonw_end(w);
        }
        jsonw_end(w);
        jsonw_end(w);
    }
    jsonw_end(w);
    jsonw_end(w);
}

char *html_page_render(const HtmlPage *p)
{
    GString *out = g_string_new("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                                "<meta charset=\"utf-8\">\n"
                                "<meta http-equiv=\"Content-Security-Policy\" content=\""
                                "default-src 'none'; script-src 'unsafe-inline'; "
                                "style-src 'unsafe-inline'\">\n"
                                "<meta name=\"viewport\" content=\"width=device-width\">\n");
    element(out, "title", p->title);
    g_string_append_printf(out, "<style>\n%s</style>\n</head>\n<body>\n", style);
    element(out, "h1", p->title);
    g_string_append(out, p->body->str);
    g_string_append(out, "<script type=\"application/json\" id=\"charts\">\n[\n");
    for (const char *c = p->charts->str; *c; c++)
        if (*c == '<')
            g_string_append(out, "\\u003c");
        else
            g_string_append_c(out, *c);
    g_string_append_printf(out, "\n]\n</script>\n<script>\n%s</script>\n</body>\n</html>\n",
                           script);
    return g_string_free(out, FALSE);
}
