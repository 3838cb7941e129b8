/* csvjson.h: a CSV table as JSON, for the programs that take JSON rather
 * than a spreadsheet (plansim sweep --format json, the library's sweep). */
#ifndef PLANSIM_OUTPUT_CSVJSON_H
#define PLANSIM_OUTPUT_CSVJSON_H

/* The rows of `csv` (a header line, then a line per row; cells as
 * report_csv_text writes them, quoted when they hold a comma, a quote or
 * a newline) as a JSON list of objects, one a line indented by two
 * spaces, keyed by the header,
 * in its order, and a newline after the list. A cell is written as JSON
 * types it: an unquoted integer as that integer, every digit; an unquoted
 * decimal number in the shortest form of its 10 significant digits (as
 * plansim's CSV writes them, jsonw_number); true and false as booleans;
 * an empty cell as null; anything else, and every quoted cell, as a
 * string. A row shorter than the header has nulls for the rest. Newly
 * allocated. */
char *csvjson_render(const char *csv);

#endif
