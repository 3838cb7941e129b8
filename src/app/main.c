/* main.c: the plansim command line, a user of libplansim like any other
 * (plansim.h): the commands are the library's (app/commands.c). */
#include "plansim.h"

int main(int argc, char **argv)
{
    return plansim_main(argc, argv);
}
