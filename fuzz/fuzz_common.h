/* fuzz_common.h: what the fuzz targets share.
 *
 * The input file: one memfd, made on first use and rewritten for each
 * input (or each part of one), which a target hands to the real loaders
 * by its /proc/self/fd path, as a file named on the command line would
 * be. And the rule every target holds each input to: it fails, if at
 * all, with an error the command line reports as bad input. */
#ifndef PLANSIM_FUZZ_COMMON_H
#define PLANSIM_FUZZ_COMMON_H

#include <stddef.h>

#include <glib.h>

/* The input file's path: "/proc/self/fd/N", the same for the whole run. */
const char *fuzz_file_path(void);

/* Makes the input file hold exactly `size` bytes of `data`; returns its
 * path. */
const char *fuzz_file_set(const void *data, size_t size);

/* Clears *error (NULL: none) if it is bad input with a message:
 * PS_ERROR_INPUT, PS_ERROR_OVER_CAP (the same refusal, after work) or of
 * the domain `also` (0: none); else prints it and aborts, a finding. */
void fuzz_check_error(GError **error, GQuark also);

#endif
