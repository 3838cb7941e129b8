/* csvjson.c: a CSV table as a JSON list of objects (csvjson.h). */
#include "output/csvjson.h"

#include <string.h>

#include <glib.h>

#include "base/jsonw.h"
#include "base/text.h"

/* A cell: its text, unquoted, and whether it was quoted. */
typedef struct {
    char *text;
    gboolean quoted;
} Cell;

static void cell_clear(gpointer data)
{
    g_free(((Cell *)data)->text);
}

/* The cells of the line at *at, which moves past its newline; NULL at the
 * end of `csv`. */
static GArray *next_line(const char **at)
{
    const char *p = *at;
    if (!*p)
        return NULL;
    GArray *cells = g_array_new(FALSE, FALSE, sizeof(Cell));
    g_array_set_clear_func(cells, cell_clear);
    for (;;) {
        GString *text = g_string_new(NULL);
        gboolean quoted = *p == '"';
        if (quoted) {
            for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
                if (*p == '"') /* "" stands for " */
                    p++;
                g_string_append_c(text, *p);
            }
            if (*p == '"')
                p++;
        }
        for (; *p && *p != ',' && *p != '\n'; p++)
            g_string_append_c(text, *p);
        Cell cell = {.text = g_string_free(text, FALSE), .quoted = quoted};
        g_array_append_val(cells, cell);
        if (*p != ',')
            break;
        p++;
    }
    if (*p == '\n')
        p++;
    *at = p;
    return cells;
}

/* Whether `s` is an integer: an optional minus, then digits. */
static gboolean is_integer(const char *s)
{
    s += *s == '-';
    return *s && strspn(s, "0123456789") == strlen(s);
}

static void cell_write(JsonWriter *w, const Cell *c)
{
    double v;
    if (c->quoted)
        jsonw_string(w, c->text);
    else if (!*c->text)
        jsonw_null(w);
    else if (strcmp(c->text, "true") == 0 || strcmp(c->text, "false") == 0)
        jsonw_bool(w, c->text[0] == 't');
    else if (text_parse_number(c->text, &v))
        is_integer(c->text) ? jsonw_int(w, v) : jsonw_number(w, v);
    else
        jsonw_string(w, c->text);
}

char *csvjson_render(const char *csv)
{
    const char *at = csv;
    g_autoptr(GArray) header = next_line(&at);
    GString *out = g_string_new(NULL);
    JsonWriter w;
    jsonw_init(&w, out);
    jsonw_begin_list(&w, 2);
    for (GArray *row; header && (row = next_line(&at));) {
        jsonw_begin_object(&w, JSONW_INLINE);
        for (guint i = 0; i < header->len; i++) {
            jsonw_key(&w, g_array_index(header, Cell, i).text);
            if (i < row->len)
                cell_write(&w, &g_array_index(row, Cell, i));
            else
                jsonw_null(&w);
        }
        jsonw_end(&w);
        g_array_free(row, TRUE);
    }
    jsonw_end(&w);
    g_string_append_c(out, '\n');
    return g_string_free(out, FALSE);
}
