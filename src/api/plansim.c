/* plansim.c: libplansim's API (plansim.h): a request's JSON made the
 * command line of a command, run with its output captured
 * (app/commands.h). */
#include "plansim.h"

#include <signal.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <glib.h>

#include "app/commands.h"
#include "spec/plan.h"

struct plansim_cancel {
    volatile gint stop; /* SweepSpec.stop: the signal a cancel stands for */
};

const char *plansim_version(void)
{
    return PACKAGE_VERSION;
}

plansim_cancel *plansim_cancel_new(void)
{
    return g_try_new0(plansim_cancel, 1);
}

void plansim_cancel_request(plansim_cancel *token)
{
    g_atomic_int_set(&token->stop, SIGINT);
}

void plansim_cancel_free(plansim_cancel *token)
{
    g_free(token);
}

void plansim_free(char *text)
{
    g_free(text);
}

int plansim_main(int argc, char **argv)
{
    return commands_main(argc, argv);
}

/* Whether `flag` is a plan field's boolean flag, which takes
 * --FLAG=false. */
static gboolean boolean_flag(const char *flag)
{
    for (int f = 0; f < PLAN_N_FIELDS; f++)
        if (plan_fields[f].kind == FIELD_BOOL && strcmp(plan_fields[f].flag, flag) == 0)
            return TRUE;
    return FALSE;
}

/* A string or a number as the command line writes it, newly allocated;
 * NULL for any other JSON value. */
static char *scalar_text(const cJSON *v)
{
    if (cJSON_IsString(v))
        return g_strdup(v->valuestring);
    if (!cJSON_IsNumber(v))
        return NULL;
    char *printed = cJSON_PrintUnformatted(v); /* the shortest form that reads back */
    char *text = g_strdup(printed);
    cJSON_free(printed);
    return text;
}

/* The value of member `v` as its flag's text (plansim.h), newly
 * allocated, "" for a flag alone, NULL for none; fails on an object or a
 * list of anything but strings and numbers. */
static gboolean member_value(const cJSON *v, const char *flag, char **text, GString *log)
{
    *text = NULL;
    if (cJSON_IsNull(v) || (cJSON_IsFalse(v) && !boolean_flag(flag)))
        return TRUE;
    if (cJSON_IsBool(v)) {
        *text = g_strdup(cJSON_IsTrue(v) ? "" : "false");
        return TRUE;
    }
    if ((*text = scalar_text(v)))
        return TRUE;
    if (cJSON_IsArray(v)) {
        GString *joined = g_string_new(NULL);
        for (const cJSON *e = v->child; e; e = e->next) {
            g_autofree char *one = scalar_text(e);
            if (!one) {
                g_string_free(joined, TRUE);
                g_string_append_printf(log,
                                       "plansim: request: \"%s\": expected a list of strings and "
                                       "numbers, got a list holding other values\n",
                                       flag);
                return FALSE;
            }
            g_string_append_printf(joined, "%s%s", e == v->child ? "" : ",", one);
        }
        *text = g_string_free(joined, FALSE);
        return TRUE;
    }
    g_string_append_printf(log,
                           "plansim: request: \"%s\": expected a string, a number, a boolean, "
                           "null or a list, got an object\n",
                           flag);
    return FALSE;
}

/* The command line of `command` for `request` (plansim.h): the command's
 * name, --format=json unless `format` is NULL, the request's flags, then
 * -o -. NULL, with the error's line in `log`, on a bad request. */
static GPtrArray *request_argv(const char *command, const char *request, const char *format,
                               GString *log)
{
    cJSON *json =
        request && *request ? cJSON_ParseWithOpts(request, NULL, TRUE) : cJSON_CreateObject();
    if (!cJSON_IsObject(json)) {
        g_string_append(log, "plansim: request: expected a JSON object of the command's flags, "
                             "got text that is not one\n");
        cJSON_Delete(json);
        return NULL;
    }
    GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(argv, g_strdup(command));
    if (format)
        g_ptr_array_add(argv, g_strdup_printf("--format=%s", format));
    for (const cJSON *m = json->child; m; m = m->next) {
        g_autofree char *flag = g_strdelimit(g_strdup(m->string), "_", '-');
        g_autofree char *value = NULL;
        if (!member_value(m, flag, &value, log)) {
            g_ptr_array_free(argv, TRUE);
            cJSON_Delete(json);
            return NULL;
        }
        if (value)
            g_ptr_array_add(argv, *value ? g_strdup_printf("--%s=%s", flag, value)
                                         : g_strdup_printf("--%s", flag));
    }
    cJSON_Delete(json);
    g_ptr_array_add(argv, g_strdup("--output=-"));
    g_ptr_array_add(argv, NULL);
    return argv;
}

/* Runs `command` on `request` (plansim.h), its rows as `format`. */
static int call(const char *command, const char *request, const char *format,
                plansim_cancel *cancel, char **output, char **log)
{
    GString *out = g_string_new(NULL), *err = g_string_new(NULL);
    GPtrArray *argv = request_argv(command, request, format, err);
    int status = PLANSIM_BAD_INPUT;
    if (argv) {
        volatile gint none = 0;
        status = commands_run_captured((int)argv->len - 1, (char **)argv->pdata,
                                       cancel ? &cancel->stop : &none, out, err);
        g_ptr_array_free(argv, TRUE);
    }
    *output = g_string_free(out, FALSE);
    *log = g_string_free(err, FALSE);
    return status;
}

int plansim_simulate(const char *request, char **output, char **log)
{
    return call("simulate", request, "json", NULL, output, log);
}

int plansim_run(const char *request, char **output, char **log)
{
    return call("run", request, "json", NULL, output, log);
}

int plansim_collective(const char *request, char **output, char **log)
{
    return call("collective", request, "json", NULL, output, log);
}

int plansim_sweep(const char *request, plansim_cancel *cancel, char **output, char **log)
{
    return call("sweep", request, "json", cancel, output, log);
}
