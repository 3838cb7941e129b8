/* check_jsonw.c: the JSON writer (base/jsonw.c).
 *
 * Its one escaper: quotes and backslashes, every control character as
 * \u00XX, each byte of invalid UTF-8 as \ufffd, valid UTF-8 untouched, in
 * strings and keys alike. Its layouts, byte for byte: members on their own
 * indented lines, inline with ", ", compact with ",", nested, empty. Its
 * numbers: %.10g, %.0f, fixed decimals, -0 as 0, NaN and infinities as
 * null. And what it writes parses back with cJSON to the values written. */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "base/jsonw.h"

/* A new GString holding `text`, and `w` started on it. */
static GString *writer(JsonWriter *w, const char *text)
{
    GString *out = g_string_new(text);
    jsonw_init(w, out);
    return out;
}

/* `s` written as a top-level JSON string; newly allocated. */
static char *string_json(const char *s)
{
    JsonWriter w;
    GString *out = writer(&w, NULL);
    jsonw_string(&w, s);
    ck_assert(w.done);
    return g_string_free(out, FALSE);
}

static void assert_string_json(const char *s, const char *expected)
{
    g_autofree char *got = string_json(s);
    ck_assert_str_eq(got, expected);
}

START_TEST(escapes_quote_and_backslash)
{
    assert_string_json("", "\"\"");
    assert_string_json("plain text", "\"plain text\"");
    assert_string_json("a\"b", "\"a\\\"b\"");
    assert_string_json("a\\b", "\"a\\\\b\"");
    assert_string_json("\"\\\"", "\"\\\"\\\\\\\"\"");
    assert_string_json("/", "\"/\""); /* no need to escape a slash */
}
END_TEST

START_TEST(escapes_every_control_character)
{
    for (int c = 1; c < 0x20; c++) {
        char s[] = {'x', (char)c, 'y', 0};
        char expected[16];
        g_snprintf(expected, sizeof expected, "\"x\\u%04xy\"", c);
        assert_string_json(s, expected);
    }
    assert_string_json("\n\t\r", "\"\\u000a\\u0009\\u000d\"");
    assert_string_json("\x7f", "\"\x7f\""); /* DEL is no control character to JSON */
}
END_TEST

START_TEST(replaces_invalid_utf8_bytes)
{
    /* valid UTF-8 passes through: 2, 3 and 4 bytes */
    assert_string_json("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
                       "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    static const struct {
        const char *in, *out;
    } bad[] = {
        {"a\377b", "\"a\\ufffdb\""},                              /* never in UTF-8 */
        {"\x80", "\"\\ufffd\""},                                  /* a lone continuation */
        {"\xc3", "\"\\ufffd\""},                                  /* cut short at the end */
        {"\303a", "\"\\ufffda\""},                                /* cut short by ASCII */
        {"\xe2\x82", "\"\\ufffd\\ufffd\""},                       /* cut short, 3 bytes */
        {"\xc0\x80", "\"\\ufffd\\ufffd\""},                       /* overlong NUL */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},            /* a surrogate */
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* past U+10FFFF */
        {"\xff\"\x01", "\"\\ufffd\\\"\\u0001\""},                 /* then the other escapes */
    };
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++)
        assert_string_json(bad[i].in, bad[i].out);
}
END_TEST

START_TEST(keys_go_through_the_same_escaper)
{
    JsonWriter w;
    GString *out = writer(&w, NULL);
    jsonw_begin_object(&w, JSONW_INLINE);
    jsonw_int(jsonw_key(&w, "a\"b\\c\n\xff"), 1);
    jsonw_end(&w);
    ck_assert_str_eq(out->str, "{\"a\\\"b\\\\c\\u000a\\ufffd\": 1}");
    g_string_free(out, TRUE);
}
END_TEST

START_TEST(null_string_is_null)
{
    assert_string_json(NULL, "null");
}
END_TEST

/* One of each layout, nested as plansim's reports nest them. */
START_TEST(layouts_byte_for_byte)
{
    JsonWriter w;
    GString *out = writer(&w, NULL);
    jsonw_begin_object(&w, 2);
    jsonw_begin_object(jsonw_key(&w, "plan"), 4);
    jsonw_int(jsonw_key(&w, "tp"), 2);
    jsonw_begin_list(jsonw_key(&w, "layers"), JSONW_COMPACT);
    jsonw_int(&w, 2);
    jsonw_int(&w, 3);
    jsonw_end(&w);
    jsonw_end(&w);
    jsonw_string(jsonw_key(&w, "name"), "x");
    jsonw_begin_list(jsonw_key(&w, "rows"), 4);
    for (int i = 0; i < 2; i++) {
        jsonw_begin_object(&w, JSONW_INLINE);
        jsonw_int(jsonw_key(&w, "i"), i);
        jsonw_bool(jsonw_key(&w, "odd"), i % 2);
        jsonw_null(jsonw_key(&w, "none"));
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_begin_list(jsonw_key(&w, "empty_lines"), 4);
    jsonw_end(&w);
    jsonw_begin_object(jsonw_key(&w, "empty_inline"), JSONW_INLINE);
    jsonw_end(&w);
    jsonw_begin_list(jsonw_key(&w, "inline"), JSONW_INLINE);
    jsonw_string(&w, "a");
    jsonw_begin_list(&w, JSONW_INLINE);
    jsonw_end(&w);
    jsonw_end(&w);
    jsonw_end(&w);
    ck_assert(w.done && w.depth == 0);
    ck_assert_str_eq(out->str, "{\n"
                               "  \"plan\": {\n"
                               "    \"tp\": 2,\n"
                               "    \"layers\": [2,3]\n"
                               "  },\n"
                               "  \"name\": \"x\",\n"
                               "  \"rows\": [\n"
                               "    {\"i\": 0, \"odd\": false, \"none\": null},\n"
                               "    {\"i\": 1, \"odd\": true, \"none\": null}\n"
                               "  ],\n"
                               "  \"empty_lines\": [],\n"
                               "  \"empty_inline\": {},\n"
                               "  \"inline\": [\"a\", []]\n"
                               "}");
    g_string_free(out, TRUE);
}
END_TEST

/* A lines layout at indent 0 inside an inline object: the Chrome trace's,
 * one event a line, the closing bracket back at the line's start. */
START_TEST(lines_inside_inline)
{
    JsonWriter w;
    GString *out = writer(&w, "");
    jsonw_begin_object(&w, JSONW_INLINE);
    jsonw_string(jsonw_key(&w, "unit"), "ms");
    jsonw_begin_list(jsonw_key(&w, "events"), 0);
    for (int i = 0; i < 2; i++) {
        jsonw_begin_object(&w, JSONW_INLINE);
        jsonw_int(jsonw_key(&w, "pid"), i);
        jsonw_end(&w);
    }
    jsonw_end(&w);
    jsonw_end(&w);
    ck_assert_str_eq(out->str, "{\"unit\": \"ms\", \"events\": [\n"
                               "{\"pid\": 0},\n"
                               "{\"pid\": 1}\n"
                               "]}");
    g_string_free(out, TRUE);
}
END_TEST

/* `v` written by `write` as a top-level value; newly allocated. */
static char *number_json(void (*write)(JsonWriter *, double), double v)
{
    JsonWriter w;
    GString *out = writer(&w, NULL);
    write(&w, v);
    ck_assert(w.done);
    return g_string_free(out, FALSE);
}

static void fixed3(JsonWriter *w, double v)
{
    jsonw_fixed(w, v, 3);
}

static void fixed6(JsonWriter *w, double v)
{
    jsonw_fixed(w, v, 6);
}

START_TEST(number_forms)
{
    static const struct {
        void (*write)(JsonWriter *, double);
        double v;
        const char *out;
    } cases[] = {
        {jsonw_number, 0.001154408833, "0.001154408833"},
        {jsonw_number, 1.036757333e-05, "1.036757333e-05"},
        {jsonw_number, 2.25485783e+10, "2.25485783e+10"},
        {jsonw_number, 1.0 / 3, "0.3333333333"},
        {jsonw_number, 887034.1, "887034.1"},
        {jsonw_number, -1.5, "-1.5"},
        {jsonw_number, 0.0, "0"},
        {jsonw_number, -0.0, "0"},
        {jsonw_number, NAN, "null"},
        {jsonw_number, INFINITY, "null"},
        {jsonw_number, -INFINITY, "null"},
        {jsonw_int, 85899345920.0, "85899345920"},
        {jsonw_int, 1e20, "100000000000000000000"},
        {jsonw_int, -0.0, "0"},
        {jsonw_int, -3, "-3"},
        {jsonw_int, NAN, "null"},
        {fixed3, 0, "0.000"},
        {fixed3, -0.0, "0.000"},
        {fixed3, 4.2081, "4.208"},
        {fixed3, 1e6 / 3, "333333.333"},
        {fixed6, 19542016 / 1073741824.0, "0.018200"},
        {fixed3, INFINITY, "null"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *got = number_json(cases[i].write, cases[i].v);
        ck_assert_msg(strcmp(got, cases[i].out) == 0, "case %zu: got %s, expected %s", i, got,
                      cases[i].out);
    }
}
END_TEST

static const cJSON *member(const cJSON *obj, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    ck_assert_msg(item != NULL, "no member \"%s\"", key);
    return item;
}

START_TEST(parses_back_with_cjson)
{
    /* every character from 1 to 127, then valid and invalid UTF-8 */
    char every[128];
    for (int c = 1; c < 128; c++)
        every[c - 1] = (char)c;
    every[127] = 0;
    const char *utf8 = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    const char *bad = "a\377b\300\200";
    /* U+FFFD for each bad byte */
    const char *bad_read = "a\357\277\275b\357\277\275\357\277\275";

    JsonWriter w;
    GString *out = writer(&w, NULL);
    jsonw_begin_object(&w, 2);
    jsonw_string(jsonw_key(&w, "every"), every);
    jsonw_string(jsonw_key(&w, "utf8"), utf8);
    jsonw_string(jsonw_key(&w, "bad"), bad);
    jsonw_string(jsonw_key(&w, every), "key");
    jsonw_number(jsonw_key(&w, "number"), 1.036757333e-05);
    jsonw_int(jsonw_key(&w, "int"), 85899345920.0);
    jsonw_fixed(jsonw_key(&w, "fixed"), 4.25, 3);
    jsonw_bool(jsonw_key(&w, "yes"), TRUE);
    jsonw_null(jsonw_key(&w, "nan"));
    jsonw_begin_list(jsonw_key(&w, "list"), 4);
    jsonw_begin_object(&w, JSONW_INLINE);
    jsonw_begin_list(jsonw_key(&w, "deep"), JSONW_COMPACT);
    jsonw_int(&w, 1);
    jsonw_int(&w, 2);
    jsonw_end(&w);
    jsonw_end(&w);
    jsonw_string(&w, "\"quoted\"");
    jsonw_end(&w);
    jsonw_end(&w);

    cJSON *root = cJSON_Parse(out->str);
    ck_assert_msg(root != NULL, "cJSON cannot parse: %s", out->str);
    ck_assert_str_eq(cJSON_GetStringValue(member(root, "every")), every);
    ck_assert_str_eq(cJSON_GetStringValue(member(root, "utf8")), utf8);
    ck_assert_str_eq(cJSON_GetStringValue(member(root, "bad")), bad_read);
    ck_assert_str_eq(cJSON_GetStringValue(member(root, every)), "key");
    ck_assert(member(root, "number")->valuedouble == 1.036757333e-05);
    ck_assert(member(root, "int")->valuedouble == 85899345920.0);
    ck_assert(member(root, "fixed")->valuedouble == 4.25);
    ck_assert(cJSON_IsTrue(member(root, "yes")));
    ck_assert(cJSON_IsNull(member(root, "nan")));
    const cJSON *list = member(root, "list");
    ck_assert_int_eq(cJSON_GetArraySize(list), 2);
    const cJSON *deep = member(cJSON_GetArrayItem(list, 0), "deep");
    ck_assert_int_eq(cJSON_GetArraySize(deep), 2);
    ck_assert_int_eq(cJSON_GetArrayItem(deep, 1)->valueint, 2);
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetArrayItem(list, 1)), "\"quoted\"");
    cJSON_Delete(root);
    g_string_free(out, TRUE);
}
END_TEST

START_TEST(appends_to_what_is_there)
{
    JsonWriter w;
    GString *out = writer(&w, "x = ");
    ck_assert(!w.done);
    jsonw_begin_list(&w, JSONW_COMPACT);
    ck_assert(!w.done);
    jsonw_end(&w);
    ck_assert(w.done);
    ck_assert_str_eq(out->str, "x = []");
    g_string_free(out, TRUE);
}
END_TEST

Suite *suite_jsonw(void)
{
    Suite *s = suite_create("jsonw");
    TCase *tc = tcase_create("writer");
    tcase_add_test(tc, escapes_quote_and_backslash);
    tcase_add_test(tc, escapes_every_control_character);
    tcase_add_test(tc, replaces_invalid_utf8_bytes);
    tcase_add_test(tc, keys_go_through_the_same_escaper);
    tcase_add_test(tc, null_string_is_null);
    tcase_add_test(tc, layouts_byte_for_byte);
    tcase_add_test(tc, lines_inside_inline);
    tcase_add_test(tc, number_forms);
    tcase_add_test(tc, parses_back_with_cjson);
    tcase_add_test(tc, appends_to_what_is_there);
    suite_add_tcase(s, tc);
    return s;
}
