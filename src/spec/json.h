/* json.h: reading validated values out of cJSON trees (private to src/spec).
 *
 * A JsonDoc is one parsed file, with the files it names merged in (a base
 * it inherits from, a part of its own: json_doc_load_kind). Every getter
 * takes the object, its JSON path ("$.gpu") and a key, and on bad input
 * sets an error of the form "FILE: $.gpu.peak_tflops: expected a positive
 * number, got -1", where FILE and the path are those of the file the value
 * came from. */
#ifndef PLANSIM_SPEC_JSON_H
#define PLANSIM_SPEC_JSON_H

#include <cjson/cJSON.h>
#include <glib.h>

#include "base/shipped.h"

typedef struct {
    char *path;       /* the file, as named by the user */
    cJSON *root;      /* owned */
    GHashTable *from; /* the values merged in from other files: a cJSON * of the tree to
                       * where it came from (json.c's JsonFrom); NULL when none was */
} JsonDoc;

/* The most bases a chain of files of one kind may have (json_doc_load_kind). */
#define JSON_MAX_BASES 8

/* A kind of file that may inherit ("base": a file, or a shipped name of
 * `files`), and whose member `part`, if any, may be a file of its own, of
 * kind `part_kind`: a cluster, whose "gpu" may name a GPU file. */
typedef struct JsonKind {
    const ShippedKind *files;
    const char *part;
    const struct JsonKind *part_kind;
} JsonKind;

/* Reads (text_read_input: a regular file within the size limit) and parses
 * `path`; the root must be an object, no object may give a key twice, and
 * every key and string must be UTF-8 (errors name the JSON path). Malformed
 * JSON is reported with its line and column. */
JsonDoc *json_doc_load(const char *path, GError **error);

/* As json_doc_load, of `text` (`len` bytes) read from `path` already, or
 * made by plansim (spec/megatron.c's model): `path` names it in errors. */
JsonDoc *json_doc_parse(const char *path, const char *text, gsize len, GError **error);

/* As json_doc_load, then the files it names, each read so in turn:
 * - its `part` member, when a string, is that file's whole object, and
 *   when an object with a "base", that file's object with the part's
 *   other members over it;
 * - its root's "base" is the file its root is merged over: objects member
 *   by member, nested objects likewise (but a part that named a file of
 *   its own replaces the base's), anything else replaced.
 * A name is a path, relative to the folder of the file that gives it, when
 * a file is there or it has a '/'; else a shipped name of the kind
 * (shipped_named). The "base" members are gone from the result. Refuses,
 * naming the file, the JSON path and the value: a name that is no file, a
 * file that leads back to itself, more than JSON_MAX_BASES bases in a
 * chain; an error inside a named file names that file. */
JsonDoc *json_doc_load_kind(const char *path, const JsonKind *kind, GError **error);
void json_doc_free(JsonDoc *doc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(JsonDoc, json_doc_free)

/* Fails on the first key of `obj` not in the NULL-terminated `known`
 * (json_doc_load has refused a key given twice),
 * suggesting the nearest known key. */
gboolean json_check_keys(const JsonDoc *doc, const cJSON *obj, const char *where,
                         const char *const *known, GError **error);

/* An object member that must be present and an object. */
const cJSON *json_object(const JsonDoc *doc, const cJSON *obj, const char *where, const char *key,
                         GError **error);

/* An integer in [min, max]. When the key is absent: *out = fallback if
 * `required` is FALSE, else an error. */
gboolean json_int(const JsonDoc *doc, const cJSON *obj, const char *where, const char *key,
                  gboolean required, long long min, long long max, long long fallback,
                  long long *out, GError **error);

/* A number in [min, max]; absent: as json_int. Every number a spec reads
 * has a range with finite, non-zero ends where zero would mean nothing
 * (a bandwidth, an efficiency), so that no time computed from them
 * overflows. */
gboolean json_number(const JsonDoc *doc, const cJSON *obj, const char *where, const char *key,
                     gboolean required, double min, double max, double fallback, double *out,
                     GError **error);

/* A boolean; absent: fallback, or an error if required. */
gboolean json_bool(const JsonDoc *doc, const cJSON *obj, const char *where, const char *key,
                   gboolean required, gboolean fallback, gboolean *out, GError **error);

/* A non-empty string without control characters (it may reach a report);
 * absent: a copy of fallback (NULL allowed), or an error if required. *out
 * is newly allocated. */
gboolean json_string(const JsonDoc *doc, const cJSON *obj, const char *where, const char *key,
                     gboolean required, const char *fallback, char **out, GError **error);

/* `item` printed as JSON for an error message, cut after 64 bytes (and then
 * ending in "..."), or "nothing" when NULL. Newly allocated. */
char *json_value_text(const cJSON *item);

/* Sets the standard error for a bad value: "FILE: WHERE.KEY: expected
 * EXPECTED, got VALUE" where VALUE is json_value_text(item). */
void json_fail(GError **error, const JsonDoc *doc, const char *where, const char *key,
               const cJSON *item, const char *expected_fmt, ...) G_GNUC_PRINTF(6, 7);

#endif
