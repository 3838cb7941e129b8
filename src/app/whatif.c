/* whatif.c: the what-if flags, parsed, and resolved against a plan's ranks
 * and links. */
#include "app/whatif.h"

#include <string.h>

#include "base/error.h"
#include "base/text.h"

WhatIf *whatif_new(void)
{
    WhatIf *w = g_new0(WhatIf, 1);
    w->gpus = g_array_new(FALSE, FALSE, sizeof(WhatIfGpu));
    w->links = g_array_new(FALSE, FALSE, sizeof(WhatIfLink));
    w->seed = 1;
    return w;
}

void whatif_free(WhatIf *w)
{
    if (!w)
        return;
    for (guint i = 0; i < w->links->len; i++)
        g_free(g_array_index(w->links, WhatIfLink, i).link);
    g_array_free(w->gpus, TRUE);
    g_array_free(w->links, TRUE);
    g_free(w->text);
    g_free(w);
}

/* Refuses `text`, given to `flag`, quoted: "FLAG: expected EXPECTED, got
 * \"TEXT\"". */
static gboolean refuse(GError **error, const char *flag, const char *text, const char *expected)
{
    g_autofree char *got = g_strdup_printf("\"%s\"", text);
    ps_error_value(error, flag, got, "%s", expected);
    return FALSE;
}

/* A number in [lo, hi] from `text`. */
static gboolean number(const char *text, double lo, double hi, double *out)
{
    return text_parse_number(text, out) && *out >= lo && *out <= hi;
}

/* "WHAT:FACTOR" split at its last colon, FACTOR how many times slower
 * WHAT runs, from 1 to `most`, as number() takes it, with an optional "x"
 * ("2x"): the GPU's and the link's read alike. `half`: what 2 means. */
static gboolean split(const char *flag, const char *text, const char *what, double most,
                      const char *half, char **head, double *factor, GError **error)
{
    const char *colon = strrchr(text, ':');
    if (colon && colon > text) {
        g_autofree char *slower = g_strdup(colon + 1);
        gsize len = strlen(slower);
        if (len > 1 && g_ascii_tolower(slower[len - 1]) == 'x')
            slower[len - 1] = 0;
        if (number(slower, 1, most, factor)) {
            *head = g_strndup(text, (gsize)(colon - text));
            return TRUE;
        }
    }
    g_autofree char *expected = g_strdup_printf(
        "%s:FACTOR with FACTOR how many times slower it runs, a number from 1 to %g (\"2\" or "
        "\"2x\": %s)",
        what, most, half);
    return refuse(error, flag, text, expected);
}

static gboolean add_gpu(WhatIf *w, const char *text, GError **error)
{
    g_autofree char *rank = NULL;
    WhatIfGpu g;
    guint64 r;
    if (!split("--slow-gpu", text, "RANK", WHATIF_MAX_GPU_FACTOR, "half its speed", &rank,
               &g.factor, error))
        return FALSE;
    if (!g_ascii_string_to_unsigned(rank, 10, 0, G_MAXINT, &r, NULL))
        return refuse(error, "--slow-gpu", text,
                      "RANK:FACTOR with RANK a GPU's number (0, 1, ...)");
    g.rank = (int)r;
    for (guint i = 0; i < w->gpus->len; i++)
        if (g_array_index(w->gpus, WhatIfGpu, i).rank == g.rank) {
            g_autofree char *expected = g_strdup_printf(
                "one --slow-gpu per GPU (GPU %d is already %gx slower)", g.rank,
                g_array_index(w->gpus, WhatIfGpu, i).factor);
            return refuse(error, "--slow-gpu", text, expected);
        }
    g_array_append_val(w->gpus, g);
    return TRUE;
}

static gboolean add_link(WhatIf *w, const char *text, GError **error)
{
    WhatIfLink l;
    if (!split("--slow-link", text, "LINK", WHATIF_MAX_LINK_FACTOR, "half its bandwidth", &l.link,
               &l.factor, error))
        return FALSE;
    g_array_append_val(w->links, l);
    return TRUE;
}

/* The summary of the what-ifs set, for reports. */
static char *describe(const WhatIf *w)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < w->gpus->len; i++) {
        const WhatIfGpu *g = &g_array_index(w->gpus, WhatIfGpu, i);
        g_string_append_printf(s, "%sslow gpu %d x%g", s->len ? ", " : "", g->rank, g->factor);
    }
    for (guint i = 0; i < w->links->len; i++) {
        const WhatIfLink *l = &g_array_index(w->links, WhatIfLink, i);
        g_string_append_printf(s, "%sslow link %s x%g", s->len ? ", " : "", l->link, l->factor);
    }
    if (w->jitter > 0)
        g_string_append_printf(s, "%sjitter %g seed %" G_GUINT64_FORMAT, s->len ? ", " : "",
                               w->jitter, w->seed);
    return g_string_free(s, FALSE);
}

gboolean whatif_parse(WhatIf *w, char **slow_gpus, char **slow_links, const char *jitter,
                      const char *seed, GError **error)
{
    for (char **t = slow_gpus; t && *t; t++)
        if (!add_gpu(w, *t, error))
            return FALSE;
    for (char **t = slow_links; t && *t; t++)
        if (!add_link(w, *t, error))
            return FALSE;
    if (jitter && !number(jitter, 0, 4, &w->jitter))
        return refuse(error, "--jitter", jitter, "a number from 0 to 4");
    if (seed && !jitter)
        return refuse(error, "--seed", seed, "--jitter SIGMA with it");
    if (seed && !g_ascii_string_to_unsigned(seed, 10, 0, G_MAXUINT64, &w->seed, NULL))
        return refuse(error, "--seed", seed, "an integer from 0 to 18446744073709551615");
    g_free(w->text);
    w->text = describe(w);
    return TRUE;
}

gboolean whatif_active(const WhatIf *w)
{
    return w && (w->gpus->len > 0 || w->links->len > 0 || w->jitter > 0);
}

gboolean whatif_gpu_factors(const WhatIf *w, int gpus, double **out, GError **error)
{
    *out = NULL;
    if (!w || w->gpus->len == 0)
        return TRUE;
    g_autofree double *factor = g_new(double, gpus);
    for (int r = 0; r < gpus; r++)
        factor[r] = 1;
    for (guint i = 0; i < w->gpus->len; i++) {
        const WhatIfGpu *g = &g_array_index(w->gpus, WhatIfGpu, i);
        if (g->rank >= gpus) {
            g_autofree char *got = g_strdup_printf("\"%d:%g\"", g->rank, g->factor);
            ps_error_value(error, "--slow-gpu", got, "a rank below the plan's %d GPUs", gpus);
            return FALSE;
        }
        factor[g->rank] = g->factor;
    }
    *out = g_steal_pointer(&factor);
    return TRUE;
}

gboolean whatif_link_scales(const WhatIf *w, const Topology *t, double **out, GError **error)
{
    *out = NULL;
    if (!w || w->links->len == 0)
        return TRUE;
    int n = topology_links(t);
    g_autofree double *scale = g_new(double, n);
    for (int l = 0; l < n; l++)
        scale[l] = 1;
    for (guint i = 0; i < w->links->len; i++) {
        const WhatIfLink *wl = &g_array_index(w->links, WhatIfLink, i);
        int found[2], k = topology_find_link(t, wl->link, found);
        if (k == 0) {
            int nodes = topology_gpus(t) / topology_gpus_per_node(t);
            g_autofree char *example = topology_link_name(t, 2 * topology_gpus(t));
            g_autofree char *expected = g_strdup_printf(
                "a link of the plan's %d node%s, named as the report names them: \"%s\", "
                "\"node 0 gpu 0 nvlink in\", or one without its direction for both",
                nodes, nodes > 1 ? "s" : "", example);
            return refuse(error, "--slow-link", wl->link, expected);
        }
        while (k--) {
            if (scale[found[k]] != 1) {
                g_autofree char *quoted = g_strdup_printf("%s:%g", wl->link, wl->factor);
                return refuse(error, "--slow-link", quoted,
                              "one --slow-link per link (this one names a link given before)");
            }
            scale[found[k]] = 1 / wl->factor;
        }
    }
    *out = g_steal_pointer(&scale);
    return TRUE;
}

gboolean whatif_check(const WhatIf *w, const ClusterSpec *cluster, int gpus, GError **error)
{
    g_autofree double *factor = NULL, *scale = NULL;
    if (!whatif_gpu_factors(w, gpus, &factor, error))
        return FALSE;
    if (!w || w->links->len == 0)
        return TRUE;
    Topology *t =
        topology_new(cluster, (gpus + cluster->gpus_per_node - 1) / cluster->gpus_per_node);
    gboolean ok = whatif_link_scales(w, t, &scale, error);
    topology_free(t);
    return ok;
}
