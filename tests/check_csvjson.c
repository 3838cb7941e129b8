/* check_csvjson.c: a CSV table as JSON (output/csvjson.c), what the
 * sweep's --format json and the library's sweep return.
 *
 * Each cell's JSON type by hand: integers with every digit, decimals as
 * jsonw_number writes them, true and false, empty cells null, quoted
 * cells strings whatever they hold (a comma, a doubled quote, a newline,
 * digits), a row shorter than the header filled with nulls; a header
 * alone is an empty list. */
#include <cjson/cJSON.h>

#include "testutil.h"
#include "output/csvjson.h"

START_TEST(cells_typed_as_json)
{
    /* 405000000000: 12 digits, past %.10g's, kept whole as a count */
    g_autofree char *json = csvjson_render("rank,name,gpus,mfu_percent,fits,layers,note\n"
                                           "1,a,405000000000,53.90552191,true,\"16,16\",\n"
                                           "2,\"say \"\"hi\"\"\nthere\",-8,1e-05,false,\"32\"\n");
    ck_assert_str_eq(json,
                     "[\n"
                     "  {\"rank\": 1, \"name\": \"a\", \"gpus\": 405000000000, "
                     "\"mfu_percent\": 53.90552191, \"fits\": true, \"layers\": \"16,16\", "
                     "\"note\": null},\n"
                     "  {\"rank\": 2, \"name\": \"say \\\"hi\\\"\\u000athere\", \"gpus\": -8, "
                     "\"mfu_percent\": 1e-05, \"fits\": false, \"layers\": \"32\", "
                     "\"note\": null}\n"
                     "]\n");
    cJSON *parsed = cJSON_Parse(json);
    ck_assert(cJSON_IsArray(parsed) && cJSON_GetArraySize(parsed) == 2);
    cJSON_Delete(parsed);
}
END_TEST

START_TEST(header_alone_is_an_empty_list)
{
    g_autofree char *json = csvjson_render("rank,plan_flags\n");
    ck_assert_str_eq(json, "[]\n");
}
END_TEST

Suite *suite_csvjson(void)
{
    Suite *s = suite_create("csvjson");
    TCase *tc = tcase_create("rows");
    tcase_add_test(tc, cells_typed_as_json);
    tcase_add_test(tc, header_alone_is_an_empty_list);
    suite_add_tcase(s, tc);
    return s;
}
