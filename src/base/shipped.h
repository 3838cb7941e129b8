/* shipped.h: the shipped inputs (models/, topologies/, topologies/gpus/,
 * plans/) found by name.
 *
 * A shipped file is looked for under three roots, first to last: the
 * current folder, the installed data folder ($(pkgdatadir)) and the source
 * tree plansim was configured in, so that a build that was never installed
 * finds its inputs from any folder. The command line's flags (app/cli.h)
 * and a cluster file's names of its base and its GPU (spec/cluster.c) take
 * the same names, looked up the same way. */
#ifndef PLANSIM_BASE_SHIPPED_H
#define PLANSIM_BASE_SHIPPED_H

#include <glib.h>

/* A kind of shipped file: what it is, for messages ("cluster"), and the
 * folders a name is looked for in, first to last, NULL-terminated. */
typedef struct {
    const char *what;
    const char *folders[3];
} ShippedKind;

extern const ShippedKind shipped_models, shipped_clusters, shipped_gpus, shipped_plans;

/* `file` ("models/gpt3-175b.json") under the first root that has it, newly
 * allocated, or NULL. */
char *shipped_find(const char *file);

/* As shipped_find, but the installed path when no root has it. */
char *shipped_path(const char *file);

/* The shipped file of `kind` named `name` (".json" may be left out): the
 * first regular file FOLDER/NAME.json of the kind's folders, each under the
 * roots in turn, newly allocated; NULL when none is. */
char *shipped_named(const ShippedKind *kind, const char *name);

/* Every folder a name of `kind` is looked for in, under every root (into
 * `folders`), and the names of the .json files they hold (into `names`,
 * sorted, each once); both arrays own their strings. */
void shipped_names(const ShippedKind *kind, GPtrArray *folders, GPtrArray *names);

/* What the folders of `kind` hold, for an error: "the shipped clusters
 * there are a, b" or "no shipped cluster is there (install plansim, or
 * give a file)"; newly allocated. */
char *shipped_held(const ShippedKind *kind, GPtrArray *names);

/* Refuses `given`, neither a file nor a shipped name of `kind`, in one
 * line (PS_ERROR_INPUT): "WHERE: expected a file or a shipped KIND's name,
 * got "GIVEN" (did you mean "NEAREST"?); looked in FOLDERS: WHAT THEY
 * HOLD". */
void shipped_refuse(GError **error, const ShippedKind *kind, const char *where,
                    const char *given);

#endif
