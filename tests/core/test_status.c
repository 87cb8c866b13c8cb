/* test_status.c - result codes and dfx_status (core/status.c): every code's
 * value and name, a status's life cycle, set / set_first / append / copy /
 * clear with NULL statuses, truncation at DFX_STATUS_MSG_MAX, and the
 * promise that recording an error never allocates. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <string.h>

#include "../eutil.h"
#include "status.h"

TestSuite(status, .init = eu_setup, .fini = eu_teardown);

/* ---- codes ---- */

/* The numbers are ABI: written out here, not taken from the map. */
static const struct {
  dfx_code code;
  int value;
  const char *name;
} codes[] = {
    {DFX_OK, 0, "DFX_OK"},                {DFX_EINVAL, -1, "DFX_EINVAL"},       {DFX_ENOTFOUND, -2, "DFX_ENOTFOUND"},
    {DFX_EUNIMPL, -3, "DFX_EUNIMPL"},     {DFX_ENOMEM, -4, "DFX_ENOMEM"},       {DFX_ECANCELED, -5, "DFX_ECANCELED"},
    {DFX_EINTERNAL, -6, "DFX_EINTERNAL"}, {DFX_EDEADLINE, -7, "DFX_EDEADLINE"}, {DFX_ERANGE, -8, "DFX_ERANGE"},
    {DFX_EIO, -9, "DFX_EIO"},             {DFX_EPRECOND, -10, "DFX_EPRECOND"},  {DFX_ELIMIT, -11, "DFX_ELIMIT"},
    {DFX_ESTUCK, -12, "DFX_ESTUCK"},
};

Test(status, every_code_has_its_value_and_name) {
  size_t n = sizeof codes / sizeof codes[0];
#define XX(name, value, text) +1
  cr_assert_eq(n, (size_t)(0 DFX_CODE_MAP(XX)), "the table above must list every code of DFX_CODE_MAP");
#undef XX
  for (size_t i = 0; i < n; i++) {
    cr_expect_eq((int)codes[i].code, codes[i].value, "%s", codes[i].name);
    cr_expect_str_eq(dfx_code_name(codes[i].code), codes[i].name);
    for (size_t j = 0; j < i; j++) cr_expect_neq(codes[i].code, codes[j].code, "codes must be distinct");
  }
}

Test(status, an_unknown_code_still_has_a_name) {
  const dfx_code odd[] = {(dfx_code)1, (dfx_code)-13, (dfx_code)-1000, (dfx_code)12345};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
    const char *s = dfx_code_name(odd[i]);
    cr_assert_not_null(s, "dfx_code_name never returns NULL");
    for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++)
      cr_expect_str_neq(s, codes[k].name, "code %d must not borrow a real code's name", (int)odd[i]);
  }
}

/* ---- life cycle ---- */

Test(status, a_new_status_is_ok_with_an_empty_message) {
  dfx_status *st = dfx_status_new();
  cr_assert_not_null(st);
  cr_expect_eq(eu_alloc.live_blocks, 1, "the status comes from the library's allocator");
  cr_expect_eq(dfx_status_code(st), DFX_OK);
  cr_expect_str_eq(dfx_status_message(st), "");
  dfx_status_free(st);
  dfx_status_free(NULL); /* _free(NULL) is a no-op */
}

Test(status, new_returns_null_when_memory_runs_out) {
  eu_alloc.fail_at = eu_alloc.n_allocs + 1;
  cr_assert_null(dfx_status_new());
  cr_assert_eq(eu_alloc.n_failed, 1);
}

/* ---- set, set_first ---- */

Test(status, set_records_code_and_formatted_message) {
  dfx_status st;
  dfx__status_clear(&st);
  cr_assert_eq(dfx__status_set(&st, DFX_EINVAL, "node '%s' has %d inputs", "add", 3), DFX_EINVAL);
  cr_expect_eq(dfx_status_code(&st), DFX_EINVAL);
  cr_expect_str_eq(dfx_status_message(&st), "node 'add' has 3 inputs");
  /* A later set replaces both. */
  cr_assert_eq(dfx__status_set(&st, DFX_ENOTFOUND, "%s", "100% gone"), DFX_ENOTFOUND);
  cr_expect_eq(st.code, DFX_ENOTFOUND);
  cr_expect_str_eq(st.msg, "100% gone", "a '%%' inside an argument is not a format");
  /* A NULL status is allowed: only the code comes back. */
  cr_expect_eq(dfx__status_set(NULL, DFX_EIO, "ignored %d", 1), DFX_EIO);
}

Test(status, set_first_keeps_the_first_error) {
  dfx_status st;
  dfx__status_clear(&st);
  cr_assert_eq(dfx__status_set_first(&st, DFX_ECANCELED, "first"), DFX_ECANCELED);
  cr_assert_eq(dfx__status_set_first(&st, DFX_EINTERNAL, "second"), DFX_EINTERNAL,
               "the caller's code comes back even when it is not recorded");
  cr_expect_eq(st.code, DFX_ECANCELED);
  cr_expect_str_eq(st.msg, "first");
  /* After a clear there is no error to keep. */
  dfx__status_clear(&st);
  cr_expect_eq(st.code, DFX_OK);
  cr_expect_str_eq(st.msg, "");
  dfx__status_set_first(&st, DFX_EINTERNAL, "second %s", "try");
  cr_expect_eq(st.code, DFX_EINTERNAL);
  cr_expect_str_eq(st.msg, "second try");
  cr_expect_eq(dfx__status_set_first(NULL, DFX_ERANGE, "x"), DFX_ERANGE);
  dfx__status_clear(NULL); /* no-op */
}

static dfx_code vset_wrapper(dfx_status *st, dfx_code c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  dfx_code r = dfx__status_vset(st, c, fmt, ap);
  va_end(ap);
  return r;
}

Test(status, vset_takes_a_va_list) {
  dfx_status st;
  dfx__status_clear(&st);
  cr_assert_eq(vset_wrapper(&st, DFX_ELIMIT, "%s=%lld", "bytes", 1LL << 40), DFX_ELIMIT);
  cr_expect_eq(st.code, DFX_ELIMIT);
  cr_expect_str_eq(st.msg, "bytes=1099511627776");
  cr_expect_eq(vset_wrapper(NULL, DFX_ESTUCK, "x"), DFX_ESTUCK);
}

/* ---- append and truncation ---- */

Test(status, append_adds_to_the_message_and_keeps_the_code) {
  dfx_status st;
  dfx__status_clear(&st);
  dfx__status_set(&st, DFX_EINVAL, "bad input");
  dfx__status_append(&st, " (node '%s')", "mul");
  dfx__status_append(&st, "%c", '!');
  cr_expect_eq(st.code, DFX_EINVAL);
  cr_expect_str_eq(st.msg, "bad input (node 'mul')!");
  dfx__status_append(NULL, "ignored"); /* no-op */
}

Test(status, messages_are_truncated_at_the_buffer_and_stay_terminated) {
  static char big[3 * DFX_STATUS_MSG_MAX];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = 0;
  dfx_status st;
  dfx__status_clear(&st);
  dfx__status_set(&st, DFX_EINVAL, "%s", big);
  cr_assert_eq(strlen(st.msg), DFX_STATUS_MSG_MAX - 1, "the longest message fills the buffer");
  cr_expect_eq(st.code, DFX_EINVAL);

  /* Appending to a full message changes nothing. */
  dfx__status_append(&st, "tail");
  cr_assert_eq(strlen(st.msg), DFX_STATUS_MSG_MAX - 1);
  cr_expect_eq(strstr(st.msg, "tail"), NULL);

  /* Appending past the end keeps the start and cuts the end. */
  dfx__status_set(&st, DFX_EIO, "head:");
  dfx__status_append(&st, "%s", big);
  cr_assert_eq(strlen(st.msg), DFX_STATUS_MSG_MAX - 1);
  cr_expect_eq(strncmp(st.msg, "head:xxx", 8), 0);

  /* One byte short of full: exactly one more character fits. */
  memset(big, 'y', DFX_STATUS_MSG_MAX - 2);
  big[DFX_STATUS_MSG_MAX - 2] = 0;
  dfx__status_set(&st, DFX_EIO, "%s", big);
  dfx__status_append(&st, "%s", "zw");
  cr_assert_eq(strlen(st.msg), DFX_STATUS_MSG_MAX - 1);
  cr_expect_eq(st.msg[DFX_STATUS_MSG_MAX - 2], 'z');
}

/* ---- copy ---- */

Test(status, copy_takes_code_and_message) {
  dfx_status a, b;
  dfx__status_clear(&a);
  dfx__status_clear(&b);
  dfx__status_set(&a, DFX_EPRECOND, "no kernel for '%s'", "Foo");
  cr_assert_eq(dfx__status_copy(&b, &a), DFX_EPRECOND);
  cr_expect_eq(b.code, DFX_EPRECOND);
  cr_expect_str_eq(b.msg, "no kernel for 'Foo'");
  /* The copy is independent of its source. */
  dfx__status_set(&a, DFX_EIO, "changed");
  cr_expect_str_eq(b.msg, "no kernel for 'Foo'");
  /* Either side may be NULL. */
  cr_expect_eq(dfx__status_copy(NULL, &a), DFX_EIO, "a NULL destination still returns src's code");
  cr_expect_eq(dfx__status_copy(&b, NULL), DFX_OK, "no source: nothing to report");
  cr_expect_eq(b.code, DFX_EPRECOND, "a NULL source leaves the destination alone");
  cr_expect_str_eq(b.msg, "no kernel for 'Foo'");
  /* Copying a status onto itself is harmless. */
  cr_expect_eq(dfx__status_copy(&b, &b), DFX_EPRECOND);
  cr_expect_str_eq(b.msg, "no kernel for 'Foo'");
}

/* ---- no allocation on error paths ---- */

Test(status, recording_an_error_never_allocates) {
  dfx_status *st = dfx_status_new();
  cr_assert_not_null(st);
  dfx_status other;
  dfx__status_clear(&other);
  long long before = eu_alloc.n_allocs;
  /* Every allocation from here on would fail: the status must not care. */
  eu_alloc.fail_at = before + 1;
  dfx__status_set(st, DFX_ENOMEM, "out of memory allocating %zu bytes", (size_t)1 << 30);
  dfx__status_set_first(st, DFX_EIO, "later");
  dfx__status_append(st, " while running '%s'", "loop/body");
  dfx__status_copy(&other, st);
  dfx__status_clear(&other);
  cr_expect_eq(eu_alloc.n_allocs, before, "setting a status must not allocate");
  cr_expect_eq(dfx_status_code(st), DFX_ENOMEM);
  cr_expect_str_eq(dfx_status_message(st), "out of memory allocating 1073741824 bytes while running 'loop/body'");
  eu_alloc.fail_at = 0;
  dfx_status_free(st);
}
