/* calibdata.c: nccl-tests output and GEMM timings into measurements
 * (calibdata.h). */
#include "app/calibdata.h"

#include <math.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"

/* The collective each nccl-tests program times, by its name without
 * "_perf", as the header line and file names give it. */
static const struct {
    const char *program;
    CollOp op;
} programs[] = {
    {.program = "all_reduce", .op = COLL_ALL_REDUCE},
    {.program = "all_gather", .op = COLL_ALL_GATHER},
    {.program = "reduce_scatter", .op = COLL_REDUCE_SCATTER},
    {.program = "alltoall", .op = COLL_ALL_TO_ALL},
    {.program = "sendrecv", .op = COLL_SEND_RECV},
};

/* The file's lines, without their "\n" or "\r\n"; NULL-terminated. */
static char **read_lines(const char *path, GError **error)
{
    g_autofree char *text = NULL;
    gsize len;
    if (!text_read_input(path, &text, &len, error))
        return NULL;
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        int line = 1;
        for (const char *c = text; c < nul; c++)
            line += *c == '\n';
        g_autofree char *where = g_strdup_printf("%s:%d", path, line);
        ps_error_value(error, where, "a NUL byte", "text");
        return NULL;
    }
    char **lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++)
        g_strchomp(*l); /* also the "\r" of CRLF lines */
    return lines;
}

static void fail_at(GError **error, const char *path, int line, const char *got,
                    const char *expected)
{
    g_autofree char *where = g_strdup_printf("%s:%d", path, line);
    g_autofree char *quoted = g_strdup_printf("\"%s\"", got);
    ps_error_value(error, where, quoted, "%s", expected);
}

/* A whole token as a finite number. */
static gboolean number(const char *token, double *out)
{
    return text_parse_number(token, out);
}

/* A whole token of decimal digits, at most `max`. */
static gboolean count(const char *token, double max, double *out)
{
    return token[0] && strspn(token, "0123456789") == strlen(token) && number(token, out) &&
           *out <= max;
}

/* The whitespace-separated tokens of a line. */
static char **tokens(const char *line)
{
    char **t = g_strsplit_set(line, " \t", -1), **out = t;
    for (char **in = t; *in; in++) {
        if (**in)
            *out++ = *in;
        else
            g_free(*in);
    }
    *out = NULL;
    return t;
}

static int program_of(const char *text)
{
    for (gsize i = 0; i < G_N_ELEMENTS(programs); i++)
        if (strstr(text, programs[i].program))
            return (int)i;
    return -1;
}

/* ---- nccl-tests ------------------------------------------------------------ */

typedef struct {
    const char *host; /* the key of host_index */
    int ranks, line;  /* on it; its first rank line */
} Host;

typedef struct {
    const char *path;
    int program;                 /* index into programs, or -1 */
    int time_col;                /* of the header line; 0: no header yet */
    GHashTable *host_index;      /* host -> its index into hosts */
    GArray *hosts;               /* Host, in order of first appearance */
    CalibNccl *data;
} NcclReader;

/* "#  Rank  3 Group  0 Pid  1234 on HOST device  3 [...] NAME" (older
 * nccl-tests have no Group). */
static gboolean rank_line(NcclReader *r, char **t, const char *line, int ln, GError **error)
{
    double rank;
    if (r->data->ranks == CALIB_MAX_RANKS) {
        g_autofree char *expected = g_strdup_printf("at most %d ranks", CALIB_MAX_RANKS);
        fail_at(error, r->path, ln, line, expected);
        return FALSE;
    }
    int on = 1; /* t[0] is "Rank": look for "on" after the rank */
    while (t[on] && strcmp(t[on], "on") != 0)
        on++;
    if (on < 2 || !count(t[1], CALIB_MAX_RANKS, &rank) || rank != r->data->ranks || !t[on] ||
        !t[on + 1]) {
        g_autofree char *expected = g_strdup_printf(
            "rank line %d, \"#  Rank %d Group G Pid P on HOST device D ...\"", r->data->ranks,
            r->data->ranks);
        fail_at(error, r->path, ln, line, expected);
        return FALSE;
    }
    gpointer index;
    if (!g_hash_table_lookup_extended(r->host_index, t[on + 1], NULL, &index)) {
        Host h = {.host = g_strdup(t[on + 1]), .ranks = 0, .line = ln};
        index = GUINT_TO_POINTER(r->hosts->len);
        g_hash_table_insert(r->host_index, (char *)h.host, index);
        g_array_append_val(r->hosts, h);
    }
    g_array_index(r->hosts, Host, GPOINTER_TO_UINT(index)).ranks++;
    r->data->ranks++;
    return TRUE;
}

/* "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time ..."
 * (`t` without its "#"): the size is the rows' first column, the time the
 * first "time" (or "cputime", nccl-tests -C). */
static gboolean header_line(NcclReader *r, char **t, const char *line, int ln, GError **error)
{
    r->time_col = 0;
    for (int i = 1; t[i] && !r->time_col; i++)
        if (strcmp(t[i], "time") == 0 || strcmp(t[i], "cputime") == 0)
            r->time_col = i;
    if (!r->time_col) {
        fail_at(error, r->path, ln, line, "a header line with the columns size and time");
        return FALSE;
    }
    return TRUE;
}

static gboolean row_line(NcclReader *r, char **t, const char *line, int ln, GError **error)
{
    CalibPoint p = {.line = ln};
    if (!r->time_col) {
        fail_at(error, r->path, ln, line,
                "the header line \"#  size  count  type  redop  root  time ...\" before the rows");
        return FALSE;
    }
    if (g_strv_length(t) <= (guint)r->time_col || !count(t[0], 1e15, &p.bytes) ||
        !number(t[r->time_col], &p.time_s) || !(p.time_s > 0)) {
        g_autofree char *expected = g_strdup_printf(
            "a row with the size in bytes (column 1, an integer up to 1e15) and the time in "
            "microseconds (column %d, a number > 0)",
            r->time_col + 1);
        fail_at(error, r->path, ln, line, expected);
        return FALSE;
    }
    p.time_s *= 1e-6;
    if (p.bytes > 0)
        g_array_append_val(r->data->points, p);
    return TRUE;
}

static gboolean nccl_line(NcclReader *r, const char *line, int ln, GError **error)
{
    g_auto(GStrv) t = tokens(line);
    if (!t[0])
        return TRUE;
    if (t[0][0] != '#') /* a row, or a log line */
        return strspn(t[0], "0123456789") == strlen(t[0]) ? row_line(r, t, line, ln, error)
                                                           : TRUE;
    g_auto(GStrv) c = tokens(strchr(line, '#') + 1);
    if (c[0] && strcmp(c[0], "Rank") == 0)
        return rank_line(r, c, line, ln, error);
    if (c[0] && strcmp(c[0], "size") == 0)
        return header_line(r, c, line, ln, error);
    if (strstr(line, "Collective test starting:"))
        r->program = program_of(line);
    return TRUE;
}

/* The whole file's checks, after its lines: what it ran, on how many
 * ranks over how many hosts. */
static gboolean nccl_check(NcclReader *r, GError **error)
{
    CalibNccl *d = r->data;
    if (r->program < 0)
        r->program = program_of(d->path);
    if (r->program < 0) {
        g_autofree char *got = g_path_get_basename(d->path);
        ps_error_value(error, d->path, got,
                       "a line \"# Collective test starting: all_reduce_perf\" or a file "
                       "name holding all_reduce, all_gather, reduce_scatter, alltoall or sendrecv");
        return FALSE;
    }
    d->op = programs[r->program].op;
    if (d->ranks < 2 || d->points->len == 0) {
        g_autofree char *got = g_strdup_printf("%d ranks and %u rows", d->ranks, d->points->len);
        ps_error_value(error, d->path, got,
                       "nccl-tests output: 2 or more \"#  Rank\" lines and rows of sizes");
        return FALSE;
    }
    d->hosts = (int)r->hosts->len;
    const Host *first = &g_array_index(r->hosts, Host, 0);
    for (int i = 1; i < d->hosts; i++) {
        const Host *h = &g_array_index(r->hosts, Host, i);
        if (h->ranks == first->ranks)
            continue;
        g_autofree char *got = g_strdup_printf("%d on %s", h->ranks, h->host);
        g_autofree char *expected = g_strdup_printf(
            "the same number of ranks on every host, %d as on %s", first->ranks, first->host);
        fail_at(error, d->path, h->line, got, expected);
        return FALSE;
    }
    return TRUE;
}

CalibNccl *calib_nccl_load(const char *path, GError **error)
{
    g_auto(GStrv) lines = read_lines(path, error);
    if (!lines)
        return NULL;
    g_autoptr(CalibNccl) d = g_new0(CalibNccl, 1);
    d->path = g_strdup(path);
    d->points = g_array_new(FALSE, FALSE, sizeof(CalibPoint));
    NcclReader r = {.path = path,
                    .program = -1,
                    .time_col = 0,
                    .host_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
                    .hosts = g_array_new(FALSE, FALSE, sizeof(Host)),
                    .data = d};
    gboolean ok = TRUE;
    for (int i = 0; ok && lines[i]; i++)
        ok = nccl_line(&r, lines[i], i + 1, error);
    ok = ok && nccl_check(&r, error);
    g_hash_table_destroy(r.host_index); /* and the hosts' names */
    g_array_free(r.hosts, TRUE);
    return ok ? g_steal_pointer(&d) : NULL;
}

void calib_nccl_free(CalibNccl *data)
{
    if (!data)
        return;
    g_free(data->path);
    g_array_free(data->points, TRUE);
    g_free(data);
}

/* ---- GEMM timings ----------------------------------------------------------- */

#define GEMM_HEADER "m,n,k,dtype,seconds"

/* "m,n,k,dtype,seconds", in any case, spaces allowed. */
static gboolean is_header(const char *line)
{
    g_autofree char *lower = g_ascii_strdown(line, -1);
    char *out = lower;
    for (const char *in = lower; *in; in++)
        if (*in != ' ' && *in != '\t')
            *out++ = *in;
    *out = '\0';
    return strcmp(lower, GEMM_HEADER) == 0;
}

static gboolean gemm_row(CalibGemm *d, const char *line, int ln, GError **error)
{
    g_auto(GStrv) f = g_strsplit(line, ",", -1);
    for (char **x = f; *x; x++)
        g_strstrip(*x);
    CalibGemmRow row = {.line = ln};
    int dtype = -1;
    if (g_strv_length(f) != 5 || !count(f[0], 1e9, &row.m) || !(row.m > 0) ||
        !count(f[1], 1e9, &row.n) || !(row.n > 0) || !count(f[2], 1e9, &row.k) || !(row.k > 0) ||
        (dtype = names_find(dtype_names, f[3])) < 0 || !number(f[4], &row.time_s) ||
        !(row.time_s > 0)) {
        g_autofree char *dtypes = names_list(dtype_names, FALSE);
        g_autofree char *expected = g_strdup_printf(
            "a row m,n,k,dtype,seconds: m, n, k integers from 1 to 1e9, dtype %s, seconds a "
            "number > 0",
            dtypes);
        fail_at(error, d->path, ln, line, expected);
        return FALSE;
    }
    row.dtype = (Dtype)dtype;
    g_array_append_val(d->rows, row);
    return TRUE;
}

CalibGemm *calib_gemm_load(const char *path, GError **error)
{
    g_auto(GStrv) lines = read_lines(path, error);
    if (!lines)
        return NULL;
    g_autoptr(CalibGemm) d = g_new0(CalibGemm, 1);
    d->path = g_strdup(path);
    d->rows = g_array_new(FALSE, FALSE, sizeof(CalibGemmRow));
    for (int i = 0; lines[i]; i++) {
        if (!lines[i][0] || (i == 0 && is_header(lines[i])))
            continue;
        if (!gemm_row(d, lines[i], i + 1, error))
            return NULL;
    }
    if (d->rows->len == 0) {
        ps_error_value(error, path, "no rows", "rows " GEMM_HEADER);
        return NULL;
    }
    return g_steal_pointer(&d);
}

void calib_gemm_free(CalibGemm *data)
{
    if (!data)
        return;
    g_free(data->path);
    g_array_free(data->rows, TRUE);
    g_free(data);
}

/* ---- measured runs ------------------------------------------------------------ */

const char *const run_measure_names[] = {"step_s", "tokens_per_s_per_gpu", "tflops_per_gpu",
                                         NULL};

/* What each column of the header is. */
typedef enum {
    COL_NAME,
    COL_MODEL,
    COL_GPUS,
    COL_SEQ_LENGTH,
    COL_GPUS_PER_NODE,
    COL_MEASURE,
    COL_FIELD
} ColKind;

typedef struct {
    ColKind kind;
    int which; /* COL_MEASURE: a RunMeasure; COL_FIELD: a PlanField */
} Column;

static const char *const fixed_columns[] = {"name",       "model",         "gpus",
                                            "seq_length", "gpus_per_node", NULL};

typedef struct {
    const char *path;
    char *folder;
    CalibModelPath resolve;
    Column *cols;
    int n_cols;
    CalibRuns *data;
} RunsReader;

/* The header: every column known, none twice, `model` and `gpus` and at
 * least one measure among them. */
static gboolean runs_header(RunsReader *r, const char *line, int ln, GError **error)
{
    g_auto(GStrv) f = g_strsplit(line, ",", -1);
    r->n_cols = (int)g_strv_length(f);
    r->cols = g_new(Column, r->n_cols);
    guint seen = 0;
    for (int i = 0; i < r->n_cols; i++) {
        const char *key = g_strstrip(f[i]);
        int k, dup = 0;
        if ((k = names_find(fixed_columns, key)) >= 0)
            r->cols[i] = (Column){.kind = (ColKind)k};
        else if ((k = names_find(run_measure_names, key)) >= 0)
            r->cols[i] = (Column){.kind = COL_MEASURE, .which = k};
        else if ((k = names_find(plan_field_names(), key)) >= 0)
            r->cols[i] = (Column){.kind = COL_FIELD, .which = k};
        else {
            g_autofree char *fields = g_strjoinv(", ", (char **)plan_field_names());
            g_autofree char *expected =
                g_strdup_printf("a column name, model, gpus, seq_length, gpus_per_node, step_s, "
                                "tokens_per_s_per_gpu, "
                                "tflops_per_gpu or a plan field (%s)",
                                fields);
            fail_at(error, r->path, ln, key, expected);
            return FALSE;
        }
        for (int j = 0; j < i; j++)
            dup |= r->cols[j].kind == r->cols[i].kind && r->cols[j].which == r->cols[i].which;
        if (dup) {
            fail_at(error, r->path, ln, key, "each column once");
            return FALSE;
        }
        seen |= 1u << r->cols[i].kind;
    }
    if (!(seen >> COL_MODEL & 1) || !(seen >> COL_GPUS & 1) || !(seen >> COL_MEASURE & 1)) {
        fail_at(error, r->path, ln, line,
                "a header with the columns model, gpus and one of step_s, tokens_per_s_per_gpu "
                "and tflops_per_gpu");
        return FALSE;
    }
    return TRUE;
}

static void run_clear(CalibRun *run)
{
    g_free(run->name);
    model_spec_free(run->model);
    plan_spec_free(run->plan);
}

/* The model cell's file: relative to the CSV's folder, else `resolve`'s. */
static char *model_path(const RunsReader *r, const char *cell, GError **error)
{
    g_autofree char *near =
        g_path_is_absolute(cell) ? g_strdup(cell) : g_build_filename(r->folder, cell, NULL);
    if (cell[0] && g_file_test(near, G_FILE_TEST_IS_REGULAR))
        return g_steal_pointer(&near);
    return r->resolve(cell, error);
}

/* One cell of a row into `run`; `where` is "FILE:LINE". */
static gboolean run_cell(const RunsReader *r, const Column *col, const char *cell,
                         const char *where, CalibRun *run, char **seq_length, GError **error)
{
    double v;
    switch (col->kind) {
    case COL_NAME:
        run->name = g_strdup(cell);
        return TRUE;
    case COL_MODEL: {
        g_autofree char *path = model_path(r, cell, error);
        if (!path || !(run->model = model_spec_load(path, error))) {
            g_prefix_error(error, "%s: ", where);
            return FALSE;
        }
        return TRUE;
    }
    case COL_GPUS:
        if (!count(cell, CLUSTER_MAX_GPUS, &v) || v < 1) {
            g_autofree char *expected =
                g_strdup_printf("gpus, an integer from 1 to %d", CLUSTER_MAX_GPUS);
            fail_at(error, r->path, run->line, cell, expected);
            return FALSE;
        }
        run->gpus = (int)v;
        return TRUE;
    case COL_SEQ_LENGTH:
        *seq_length = g_strdup(cell);
        return TRUE;
    case COL_GPUS_PER_NODE: /* empty: whole nodes */
        if (cell[0] && (!count(cell, CLUSTER_MAX_GPUS, &v) || v < 1)) {
            fail_at(error, r->path, run->line, cell,
                    "gpus_per_node, empty or the GPUs of each node the run used");
            return FALSE;
        }
        run->gpus_per_node = cell[0] ? (int)v : 0;
        return TRUE;
    case COL_MEASURE:
        if (run->measure != RUN_MEASURES || !number(cell, &v) || !(v > 0)) {
            g_autofree char *expected = g_strdup_printf(
                "%s, a number > 0, in the one measure column the row fills",
                run_measure_names[col->which]);
            fail_at(error, r->path, run->line, cell, expected);
            return FALSE;
        }
        run->measure = (RunMeasure)col->which;
        run->value = v;
        return TRUE;
    default: {
        g_autofree char *origin =
            g_strdup_printf("%s, column %s", where, plan_fields[col->which].name);
        g_autofree char *text = g_strdup(cell);
        g_strdelimit(text, " ", ','); /* a list's values, space-separated */
        return plan_spec_set_kept(run->plan, (PlanField)col->which, text,
                                  g_string_chunk_insert(r->data->origins, origin), error);
    }
    }
}

static gboolean runs_row(RunsReader *r, const char *line, int ln, GError **error)
{
    g_auto(GStrv) f = g_strsplit(line, ",", -1);
    if ((int)g_strv_length(f) != r->n_cols) {
        g_autofree char *expected = g_strdup_printf("a row of %d cells, as the header", r->n_cols);
        fail_at(error, r->path, ln, line, expected);
        return FALSE;
    }
    if (r->data->runs->len == CALIB_MAX_RUNS) {
        g_autofree char *expected = g_strdup_printf("at most %d runs", CALIB_MAX_RUNS);
        fail_at(error, r->path, ln, line, expected);
        return FALSE;
    }
    g_autofree char *where = g_strdup_printf("%s:%d", r->path, ln);
    g_autofree char *seq_length = NULL;
    CalibRun run = {.line = ln, .plan = plan_spec_new(), .measure = RUN_MEASURES};
    gboolean ok = TRUE;
    for (int i = 0; ok && i < r->n_cols; i++) {
        const char *cell = g_strstrip(f[i]);
        if (cell[0] || r->cols[i].kind == COL_MODEL || r->cols[i].kind == COL_GPUS)
            ok = run_cell(r, &r->cols[i], cell, where, &run, &seq_length, error);
    }
    if (ok && run.measure == RUN_MEASURES) {
        fail_at(error, r->path, ln, line,
                "a row that fills one of step_s, tokens_per_s_per_gpu and tflops_per_gpu");
        ok = FALSE;
    }
    if (ok && seq_length) {
        g_autofree char *origin = g_strdup_printf("%s, column seq_length", where);
        ok = model_spec_set_seq_length(run.model, seq_length, origin, error);
    }
    if (!ok) {
        run_clear(&run);
        return FALSE;
    }
    if (!run.name)
        run.name = g_steal_pointer(&where);
    g_array_append_val(r->data->runs, run);
    return TRUE;
}

CalibRuns *calib_runs_load(const char *path, CalibModelPath resolve, GError **error)
{
    g_auto(GStrv) lines = read_lines(path, error);
    if (!lines)
        return NULL;
    g_autoptr(CalibRuns) d = g_new0(CalibRuns, 1);
    d->path = g_strdup(path);
    d->runs = g_array_new(FALSE, FALSE, sizeof(CalibRun));
    d->origins = g_string_chunk_new(4096);
    RunsReader r = {
        .path = path, .folder = g_path_get_dirname(path), .resolve = resolve, .data = d};
    gboolean ok = TRUE;
    for (int i = 0; ok && lines[i]; i++) {
        if (!lines[i][0] || lines[i][0] == '#')
            continue;
        ok = r.cols ? runs_row(&r, lines[i], i + 1, error)
                    : runs_header(&r, lines[i], i + 1, error);
    }
    g_free(r.folder);
    g_free(r.cols);
    if (ok && d->runs->len == 0) {
        ps_error_value(error, path, "no rows", "a header line and rows of measured runs");
        ok = FALSE;
    }
    return ok ? g_steal_pointer(&d) : NULL;
}

void calib_runs_free(CalibRuns *data)
{
    if (!data)
        return;
    for (guint i = 0; i < data->runs->len; i++)
        run_clear(&g_array_index(data->runs, CalibRun, i));
    g_array_free(data->runs, TRUE);
    if (data->origins)
        g_string_chunk_free(data->origins);
    g_free(data->path);
    g_free(data);
}
