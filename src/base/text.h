/* text.h: small string and file helpers shared by the spec parser and the
 * CLI: every input file is read, and every output written, here, standard
 * output and standard error included. */
#ifndef PLANSIM_BASE_TEXT_H
#define PLANSIM_BASE_TEXT_H

#include <glib.h>

/* The candidate closest to `word` by edit distance (to the whole candidate,
 * or one more than to its prefix a letter longer than the word, so that a
 * truncated name finds its full form), or NULL when none is within a third
 * of the word's length (rounded up, at least 2 edits).
 * `candidates` is NULL-terminated; the result points into it. */
const char *text_nearest(const char *word, const char *const *candidates);

/* Parses the whole of `text` as a decimal number, the one syntax plansim
 * reads numbers in, from flags and from text files alike: an optional
 * minus sign, digits with an optional fraction (or a fraction alone,
 * ".5"), and an optional exponent ("e-3", "E+6"), as JSON writes numbers.
 * No spaces, no plus sign, no hexadecimal, no "inf" or "nan". FALSE, *out
 * untouched, for anything else or for a value too large for a double
 * (1e999). */
gboolean text_parse_number(const char *text, double *out);

/* How a count may be written (text_parse_count): the powers its suffixes
 * stand for, and whether it is a whole number. */
typedef enum {
    TEXT_PLAIN,   /* no suffix */
    TEXT_DECIMAL, /* K, M, B or G, T: 1e3, 1e6, 1e9, 1e12 ("2T tokens") */
    TEXT_BINARY,  /* K, M, G, T: 2^10 .. 2^40 ("128K context", "16K GPUs",
                   * nccl-tests' -b 4M) */
} TextSuffixes;

/* Parses the whole of `text` as a count, the one syntax of plansim's
 * counts and sizes: a number as text_parse_number reads it, then an
 * optional suffix of `suffixes`, either case. `whole`: the value must be
 * an integer, and a number without a suffix is written without a
 * fraction or an exponent ("4096", "4k", "1.5k"; not "4096.0"). FALSE,
 * *out untouched, otherwise. */
gboolean text_parse_count(const char *text, TextSuffixes suffixes, gboolean whole, double *out);

/* How text_parse_count reads `suffixes`, for an error's "expected":
 * "" for TEXT_PLAIN, else ", optionally with a suffix K, M, ... (...)". */
const char *text_suffixes_help(TextSuffixes suffixes);

/* The most bytes an input file may hold, 64 MiB, unless the environment
 * variable PLANSIM_MAX_INPUT_BYTES (a positive integer) says otherwise. */
#define TEXT_MAX_INPUT_BYTES_DEFAULT ((gsize)64 << 20)
#define TEXT_MAX_INPUT_BYTES_ENV     "PLANSIM_MAX_INPUT_BYTES"

/* Reads the whole of the regular file `path` into *text (newly allocated,
 * NUL-terminated, *len bytes before the NUL). Refuses, with a PS_ERROR_INPUT
 * error naming the file, anything but a regular file (a folder, a device
 * such as /dev/zero, a FIFO: refused before it is opened, so that nothing
 * blocks or is read without end) and a file of more bytes than the limit
 * above, reading at most one byte past it; a bad PLANSIM_MAX_INPUT_BYTES is
 * an error too. */
gboolean text_read_input(const char *path, char **text, gsize *len, GError **error);

/* Refuses, as a bad target (PS_ERROR_INPUT) named with its reason, a
 * file to write whose folder is missing or no folder: what a command
 * checks before it starts work whose result would be lost. */
gboolean text_check_target(const char *path, GError **error);

/* Writes `len` bytes to `path` whole or not at all: a temporary file in the
 * same folder, then rename(2), keeping the mode of the file it replaces
 * (0644, less the umask, for a new one). "-" means standard output; an
 * existing device or pipe (/dev/null) is written directly; a symbolic link
 * is written through (its target replaced, the link kept), and one to a
 * missing file is refused (PS_ERROR_IO). An empty name, a folder, a
 * missing folder and a folder that takes no new file (/proc, read-only)
 * are bad targets (PS_ERROR_INPUT); a failed write is PS_ERROR_IO; the
 * error names `path` and the reason, never the temporary file. */
gboolean text_write_atomic(const char *path, const char *data, gsize len, GError **error);

/* Standard output and standard error, as the commands write them: to the
 * process's, or, on a thread that has called text_capture_start, appended
 * to two strings instead (the library, plansim.h, runs a command so). The
 * capture is the calling thread's alone: two threads capture at once, each
 * its own. */
void text_capture_start(GString *out, GString *err);

/* Ends the calling thread's capture: its writes go to the process's
 * standard output and error again. */
void text_capture_stop(void);

/* Whether the calling thread's output is captured. */
gboolean text_capturing(void);

/* Writes `len` bytes to standard output (or the capture); FALSE if the
 * write failed. */
gboolean text_out(const char *data, gsize len);

/* printf to standard error (or the capture): warnings, notes, errors. */
void text_err(const char *format, ...) G_GNUC_PRINTF(1, 2);

#endif
