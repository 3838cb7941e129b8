/* check_main.c: the one Check program, tests/check_plansim.
 *
 * Runs every suite of suites.def through one SRunner, so that Check prints
 * one summary line ("100%: Checks: N, Failures: 0, Errors: 0") for them
 * all. Usage:
 *   check_plansim          every suite (or the one CK_RUN_SUITE names)
 *   check_plansim SUITE    that suite only (overrides CK_RUN_SUITE)
 *   check_plansim --list   the suites' names
 * Check's own environment applies: CK_RUN_CASE picks a test case,
 * CK_VERBOSITY the output (silent, minimal, normal, verbose),
 * CK_FORK=no runs the tests in this process (for a debugger or valgrind),
 * CK_DEFAULT_TIMEOUT the seconds each test may take. The exit status is 0
 * when every test passed, 1 when one failed and 2 for a bad suite name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

typedef struct {
    const char *name;
    Suite *(*make)(void);
} SuiteEntry;

static const SuiteEntry suites[] = {
#define SUITE(name) {#name, suite_##name},
#include "suites.def"
#undef SUITE
};

static gboolean known(const char *name)
{
    for (gsize i = 0; i < G_N_ELEMENTS(suites); i++)
        if (strcmp(suites[i].name, name) == 0)
            return TRUE;
    return FALSE;
}

static void list(FILE *out)
{
    for (gsize i = 0; i < G_N_ELEMENTS(suites); i++)
        fprintf(out, "%s%s", i ? " " : "", suites[i].name);
    fprintf(out, "\n");
}

int main(int argc, char **argv)
{
    gboolean help = argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0);
    if (help || argc > 2) {
        FILE *out = help ? stdout : stderr;
        fprintf(out, "usage: %s [--list | SUITE]\nsuites: ", argv[0]);
        list(out);
        return help ? 0 : 2;
    }
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        list(stdout);
        return 0;
    }
    /* the suite asked for, by argument or by Check's CK_RUN_SUITE; a name
     * that is no suite would run nothing and pass */
    const char *only = argc == 2 ? argv[1] : g_getenv("CK_RUN_SUITE");
    if (only && *only && !known(only)) {
        fprintf(stderr, "%s: no suite \"%s\"; the suites: ", argv[0], only);
        list(stderr);
        return 2;
    }
    SRunner *sr = srunner_create(suites[0].make());
    for (gsize i = 1; i < G_N_ELEMENTS(suites); i++)
        srunner_add_suite(sr, suites[i].make());
    srunner_run(sr, argc == 2 ? argv[1] : NULL, NULL, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
