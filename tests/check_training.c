/* check_training.c: the training totals (metrics/training.h) against hand
 * calculations, and the --tokens parser. */
#include <math.h>
#include <string.h>

#include "metrics/training.h"
#include "testutil.h"

/* GPT-3 175B on 300B tokens (Brown et al. 2020): a batch of 1,536
 * sequences of 2,048 tokens (3,145,728 tokens, the paper's 3.2M), a step of
 * 12 s on 1,024 GPUs at 2 per GPU-hour. By hand:
 *   steps     = ceil(300e9 / 3,145,728) = ceil(95,367.43...) = 95,368
 *   time      = 95,368 x 12 s = 1,144,416 s = 13.2456 days
 *   GPU-hours = 1,144,416 / 3600 x 1024 = 317.8933... h x 1024 = 325,522.773
 *   cost      = 2 x 325,522.773 = 651,045.547
 *   tokens/s per GPU = 3,145,728 / (12 x 1024) = 256 */
START_TEST(gpt3_on_300b_tokens)
{
    Training t;
    training_compute(&t, 300e9, 2, 1536.0 * 2048, 12, 1024);
    ck_assert_double_eq(t.steps, 95368);
    ck_assert_double_eq(t.time_s, 1144416);
    ck_assert_rel(t.days, 13.24556, 1e-6);
    ck_assert_rel(t.gpu_hours, 325522.773, 1e-8);
    ck_assert_rel(t.cost, 651045.547, 1e-8);
    ck_assert_double_eq(t.tokens_per_gpu_s, 256);
}
END_TEST

/* The README's Llama 2 7B recipe: 2T tokens, 4,194,304 tokens a step:
 * ceil(2e12 / 4,194,304) = ceil(476,837.158...) = 476,838 steps; an exact
 * multiple is not rounded up (4,194,304 x 10 tokens: 10 steps). */
START_TEST(steps_round_up)
{
    Training t;
    training_compute(&t, 2e12, 0, 4194304, 1, 64);
    ck_assert_double_eq(t.steps, 476838);
    ck_assert_double_eq(t.cost, 0); /* no price */
    training_compute(&t, 4194304.0 * 10, 0, 4194304, 1, 64);
    ck_assert_double_eq(t.steps, 10);
}
END_TEST

START_TEST(no_tokens_no_totals)
{
    Training t;
    training_compute(&t, 0, 2, 4096, 1, 8);
    ck_assert_double_eq(t.steps, 0);
    ck_assert_double_eq(t.gpu_hours, 0);
    ck_assert_double_eq(t.tokens_per_gpu_s, 0);
}
END_TEST

START_TEST(counts_take_decimal_suffixes)
{
    static const struct {
        const char *text;
        double value;
    } good[] = {{"2T", 2e12}, {"1.5B", 1.5e9}, {"300G", 300e9}, {"7M", 7e6},
                {"12K", 12e3}, {"1000", 1000}, {"2e12", 2e12}};
    for (gsize i = 0; i < G_N_ELEMENTS(good); i++) {
        double v = 0;
        GError *error = NULL;
        ck_assert_msg(training_parse_count("--tokens", good[i].text, &v, &error), "%s",
                      good[i].text);
        ck_assert_double_eq(v, good[i].value);
    }
    /* issue 33: under one token ("1e-308" was 1 step) or over
     * TRAINING_MAX_TOKENS (1e18) is refused too */
    static const char *const bad[] = {"",    "T",   "2X",  "2TT",    "-1T",  "0",
                                      "2 T", "nan", "inf", "1e-308", "0.5", "1e19"};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        double v = 0;
        GError *error = NULL;
        ck_assert_msg(!training_parse_count("--tokens", bad[i], &v, &error), "\"%s\"", bad[i]);
        ck_assert_ptr_nonnull(strstr(error->message, "--tokens: expected tokens from 1 to 1e+18"));
        g_error_free(error);
    }
}
END_TEST

Suite *suite_training(void)
{
    Suite *s = suite_create("training");
    TCase *tc = tcase_create("totals");
    tcase_add_test(tc, gpt3_on_300b_tokens);
    tcase_add_test(tc, steps_round_up);
    tcase_add_test(tc, no_tokens_no_totals);
    tcase_add_test(tc, counts_take_decimal_suffixes);
    suite_add_tcase(s, tc);
    return s;
}
