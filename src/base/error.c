/* error.c: the GError domain of plansim, and messages made one safe line. */
#include "base/error.h"

#include <stdarg.h>
#include <string.h>

/* An error's private part: the reason of a value error, or NULL. */
typedef struct {
    char *reason;
} PsErrorPrivate;

static void ps_error_private_init(PsErrorPrivate *priv)
{
    priv->reason = NULL;
}

static void ps_error_private_copy(const PsErrorPrivate *from, PsErrorPrivate *to)
{
    to->reason = g_strdup(from->reason);
}

static void ps_error_private_clear(PsErrorPrivate *priv)
{
    g_clear_pointer(&priv->reason, g_free);
}

G_DEFINE_EXTENDED_ERROR(PsError, ps_error)

char *ps_error_cut(const char *got)
{
    gsize len = strlen(got), cut = PS_ERROR_VALUE_MAX;
    if (len <= PS_ERROR_VALUE_MAX)
        return g_strdup(got);
    while (cut > 0 && ((guchar)got[cut] & 0xC0) == 0x80)
        cut--;
    return g_strdup_printf("%.*s... (%" G_GSIZE_FORMAT " bytes)", (int)cut, got, len);
}

char *ps_error_quote(const char *value)
{
    g_autofree char *cut = ps_error_cut(value);
    return g_strdup_printf("\"%s\"", cut);
}

void ps_error_value(GError **error, const char *where, const char *got, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *expected = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (!error)
        return;
    g_autofree char *value = ps_error_cut(got);
    g_set_error(error, PS_ERROR, PS_ERROR_INPUT, "%s: expected %s, got %s", where, expected, value);
    ps_error_get_private(*error)->reason = g_strdup_printf("%s: expected %s", where, expected);
}

const char *ps_error_reason(const GError *error)
{
    const PsErrorPrivate *priv = error->domain == PS_ERROR ? ps_error_get_private(error) : NULL;
    return priv && priv->reason ? priv->reason : error->message;
}

char *ps_error_escape(const char *message)
{
    GString *out = g_string_sized_new(strlen(message) + 16);
    const char *p = message;
    while (*p) {
        gunichar c = g_utf8_get_char_validated(p, -1);
        if (c == (gunichar)-1 || c == (gunichar)-2) { /* a byte of invalid UTF-8 */
            g_string_append_printf(out, "\\x%02x", (guchar)*p);
            p++;
            continue;
        }
        const char *next = g_utf8_next_char(p);
        if (c == '\n')
            g_string_append(out, "\\n");
        else if (c == '\r')
            g_string_append(out, "\\r");
        else if (c == '\t')
            g_string_append(out, "\\t");
        else if (c < 0x80 && g_unichar_iscntrl(c))
            g_string_append_printf(out, "\\x%02x", (unsigned)c);
        else if (g_unichar_iscntrl(c)) /* C1 controls: a terminal may obey them */
            g_string_append_printf(out, "\\u%04x", (unsigned)c);
        else
            g_string_append_len(out, p, next - p);
        p = next;
    }
    return g_string_free(out, FALSE);
}
