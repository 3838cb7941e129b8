/* commands.h: the commands of the command line (app/cmd_*.c), in one
 * table, run as the program does (commands_main) or with their output
 * captured (commands_run_captured: the library's way in, plansim.h). */
#ifndef PLANSIM_APP_COMMANDS_H
#define PLANSIM_APP_COMMANDS_H

#include <glib.h>

/* The program: argv[1] names the command (simulate, run, sweep,
 * collective, calibrate), or is --help or --version; returns the exit
 * status (app/command.h). No command, or an unknown one, is bad input. */
int commands_main(int argc, char **argv);

/* Runs the command line `argv` (argv[0] the command's name, then its
 * options) as the program would, but on the calling thread alone: what
 * it writes to standard output is appended to `out`, what it writes to
 * standard error to `err` (base/text.h), no --help, and `stop` (not
 * SIGINT or SIGTERM) is the flag that stops a sweep. Returns the exit
 * status; an unknown command is bad input (2). */
int commands_run_captured(int argc, char **argv, volatile gint *stop, GString *out, GString *err);

#endif
