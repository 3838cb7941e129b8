/* json.h: reading validated values out of cJSON trees (private to src/spec).
 *
 * A JsonDoc is one parsed file. Every getter takes the object, its JSON path
 * ("$.gpu") and a key, and on bad input sets an error of the form
 * "FILE: $.gpu.peak_tflops: expected a positive number, got -1". */
#ifndef PLANSIM_SPEC_JSON_H
#define PLANSIM_SPEC_JSON_H

#include <cjson/cJSON.h>
#include <glib.h>

typedef struct {
    char *path;  /* the file, as named by the user */
    cJSON *root; /* owned */
} JsonDoc;

/* Reads (text_read_input: a regular file within the size limit) and parses
 * `path`; the root must be an object, no object may give a key twice, and
 * every key and string must be UTF-8 (errors name the JSON path). Malformed
 * JSON is reported with its line and column. */
JsonDoc *json_doc_load(const char *path, GError **error);
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
