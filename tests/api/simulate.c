/* simulate.c: the default simulate through libplansim (docs/api.md), built
 * by tests/cli_api.sh with pkg-config's flags for plansim. */
#include <stdio.h>
#include <plansim.h>

int main(void)
{
    char *output, *log;
    int status = plansim_simulate("{}", &output, &log);
    fputs(status == PLANSIM_OK ? output : log, status == PLANSIM_OK ? stdout : stderr);
    plansim_free(output);
    plansim_free(log);
    return status;
}
