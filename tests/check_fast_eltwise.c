/* check_fast_eltwise.c - placeholder suite until its solvers land. */
#include "tests/testutil.h"
START_TEST(test_placeholder) { ck_assert_int_eq(udnnGetVersion(), UDNN_VERSION); }
END_TEST
int main(void) { Suite *s = suite_create("fast_eltwise"); TCase *tc = tcase_create("core"); tcase_add_test(tc, test_placeholder); suite_add_tcase(s, tc); return tu_run_suite(s); }
