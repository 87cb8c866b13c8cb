/* test_kernel_ctx.c - the helpers kernels call from their bodies
 * (core/kernel_ctx.c): output allocation and its errors, failing with a
 * message, polling for cancellation and timeouts, scalar and vector reads,
 * and handing objects to the run. */
#include <criterion/criterion.h>
#include <string.h>
#include <uv.h>

#include "../eutil.h"
#include "kernel.h"
#include "step.h"

TestSuite(kernel_ctx, .init = eu_setup, .fini = eu_teardown);

/* A context with one input and one output, as the executor makes it. */
typedef struct {
  dfx_kctx ctx;
  dfx_step step;
  dfx_status st;
  dfx_tensor *in[1], *out[1];
} fixture;

static void open_ctx(fixture *f, dfx_tensor *input) {
  memset(f, 0, sizeof *f);
  cr_assert_eq(dfx__step_init(&f->step), DFX_OK);
  f->in[0] = input;
  f->ctx = (dfx_kctx){.n_in = 1, .in = f->in, .n_out = 1, .out = f->out, .step = &f->step, .st = &f->st};
}

static void close_ctx(fixture *f) {
  dfx__tensor_unref(f->in[0]);
  dfx__tensor_unref(f->out[0]);
  dfx__step_destroy(&f->step);
}

Test(kernel_ctx, poll_reports_cancellation_and_the_deadline) {
  fixture f;
  open_ctx(&f, NULL);
  cr_assert_eq(dfx__kctx_poll(&f.ctx), DFX_OK, "a fresh run goes on");
  f.step.t0_ns = uv_hrtime();
  f.step.deadline_ns = f.step.t0_ns + 1000000000ull;
  cr_assert_eq(dfx__kctx_poll(&f.ctx), DFX_OK, "the deadline is a second away");
  f.step.deadline_ns = 1; /* long past */
  cr_assert_eq(dfx__kctx_poll(&f.ctx), DFX_EDEADLINE);
  cr_assert(strstr(f.st.msg, "timed out"), "%s", f.st.msg);
  f.step.deadline_ns = 0;
  dfx__step_cancel(&f.step);
  cr_assert(dfx__kctx_cancelled(&f.ctx));
  cr_assert_eq(dfx__kctx_poll(&f.ctx), DFX_ECANCELED);
  cr_assert(strstr(f.st.msg, "cancelled"), "%s", f.st.msg);
  close_ctx(&f);
}

Test(kernel_ctx, alloc_names_the_output_and_the_problem) {
  fixture f;
  open_ctx(&f, NULL);
  int64_t ok[2] = {2, 3}, bad[1] = {-4};
  dfx_tensor *t = dfx__kctx_alloc(&f.ctx, 0, DFX_F32, 2, ok);
  cr_assert(t && f.out[0] == t && t->count == 6);
  cr_assert_null(dfx__kctx_alloc(&f.ctx, 0, DFX_F32, 1, bad));
  cr_assert(strstr(f.st.msg, "output 0") && strstr(f.st.msg, "[-4]"), "%s", f.st.msg);
  cr_assert_null(dfx__kctx_alloc(&f.ctx, 0, DFX_F32, DFX_MAX_DIMS + 1, ok));
  cr_assert(strstr(f.st.msg, "rank"), "%s", f.st.msg);
  close_ctx(&f);
}

Test(kernel_ctx, scalar_and_vector_reads_check_what_they_get) {
  int64_t three = 3, v[3] = {4, -5, 6};
  fixture f;
  open_ctx(&f, dfx__tensor_scalar(DFX_I64, &three));
  int64_t x = 0, out[8];
  int n = 0;
  cr_assert_eq(dfx__kctx_scalar_i64(&f.ctx, 0, "axis", &x), DFX_OK);
  cr_assert_eq(x, 3);
  cr_assert_eq(dfx__kctx_vector_i64(&f.ctx, 0, "dims", out, 8, &n), DFX_OK, "a scalar reads as one element");
  cr_assert_eq(n, 1);
  dfx__tensor_unref(f.in[0]);
  int64_t d3 = 3;
  f.in[0] = dfx_tensor_new_copy(DFX_I64, &d3, 1, v, sizeof v);
  cr_assert_eq(dfx__kctx_vector_i64(&f.ctx, 0, "dims", out, 8, &n), DFX_OK);
  cr_assert(n == 3 && out[1] == -5);
  cr_assert_eq(dfx__kctx_vector_i64(&f.ctx, 0, "dims", out, 2, &n), DFX_EINVAL);
  cr_assert(strstr(f.st.msg, "at most 2"), "%s", f.st.msg);
  cr_assert_eq(dfx__kctx_scalar_i64(&f.ctx, 0, "axis", &x), DFX_EINVAL);
  cr_assert(strstr(f.st.msg, "axis must be an integer scalar"), "%s", f.st.msg);
  close_ctx(&f);
}

static int freed;
static void count_free(void *obj) {
  (void)obj;
  freed++;
}

Test(kernel_ctx, resources_handed_to_the_run_are_freed_with_it) {
  fixture f;
  open_ctx(&f, NULL);
  freed = 0;
  static int a, b;
  cr_assert_eq(dfx__kctx_step_own(&f.ctx, &a, count_free), DFX_OK);
  cr_assert_eq(dfx__kctx_step_own(&f.ctx, &b, count_free), DFX_OK);
  cr_assert_eq(freed, 0);
  close_ctx(&f);
  cr_assert_eq(freed, 2);
  /* Outside a run a resource cannot be kept: it is freed at once and refused. */
  dfx_kctx lone = {.st = &f.st};
  cr_assert_eq(dfx__kctx_step_own(&lone, &a, count_free), DFX_EINTERNAL);
  cr_assert_eq(freed, 3);
}
