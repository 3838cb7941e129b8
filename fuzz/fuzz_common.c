/* fuzz_common.c: what the fuzz targets share (fuzz_common.h). The input
 * file is a memfd, so that no input touches the disk; a failure to make
 * or write it is the harness's, and aborts. */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/error.h"

static int input_fd = -1;
static char input_path[64];

const char *fuzz_file_path(void)
{
    if (input_fd < 0) {
        input_fd = memfd_create("plansim-fuzz-input", 0);
        if (input_fd < 0)
            abort();
        snprintf(input_path, sizeof input_path, "/proc/self/fd/%d", input_fd);
    }
    return input_path;
}

const char *fuzz_file_set(const void *data, size_t size)
{
    const char *path = fuzz_file_path();
    if (ftruncate(input_fd, 0) != 0 || (size && pwrite(input_fd, data, size, 0) != (ssize_t)size))
        abort();
    return path;
}

void fuzz_check_error(GError **error, GQuark also)
{
    GError *e = *error;
    if (!e)
        return;
    gboolean bad_input = g_error_matches(e, PS_ERROR, PS_ERROR_INPUT) ||
                         g_error_matches(e, PS_ERROR, PS_ERROR_OVER_CAP) ||
                         (also && e->domain == also);
    if (!bad_input || !e->message[0]) {
        fprintf(stderr, "fuzz: not a bad input's error (%s %d): %s\n", g_quark_to_string(e->domain),
                e->code, e->message);
        abort();
    }
    g_clear_error(error);
}
