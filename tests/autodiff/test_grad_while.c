/* test_grad_while.c - numeric checks of gradients through TF1 while loops
 * (autodiff/grad_while.c): 0, 1 and many iterations, loop invariants,
 * bodies whose gradient needs every iteration's forward values, nested
 * loops with invariants at each level, a cond inside a loop, and
 * parallel_iterations 1 and 10. The iteration count is a fed int32 n. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eutil.h"
#include "gcheck.h"
#include "gtext_ad.h"

TestSuite(grad_while, .init = eu_setup, .fini = eu_teardown, .timeout = 240);

static const dfx_dtype BOTH[] = {DFX_F64, DFX_F32};

#define ENTER(name, x, frame, is_const, pi, t)                                                            \
  "node { name: \"" name "\" op: \"Enter\"" IN(x) t AS("frame_name", frame) AB("is_constant", is_const)   \
  AI("parallel_iterations", pi) " }\n"
#define TI " attr { key: \"T\" value { type: DT_INT32 } }"
#define TF AT("T")
#define MERGE(name, a, b, t) "node { name: \"" name "\" op: \"Merge\"" IN(a) IN(b) t AI("N", 2) " }\n"
#define SWITCH(name, x, p, t) "node { name: \"" name "\" op: \"Switch\"" IN(x) IN(p) t " }\n"
#define ONE(op, name, x, t) "node { name: \"" name "\" op: \"" op "\"" IN(x) t " }\n"
#define CI_CTRL(name, v, ctrl) \
  "node { name: \"" name "\" op: \"Const\" input: \"^" ctrl "\" attr { key: \"dtype\" value { type: DT_INT32 } }" \
  " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: " #v " } } } }\n"

/* The loop head for P: counter i < n (n entered as a constant) starting at
 * the constant node I0 (named P "i0"), one float variable x starting at X; P "x" is the body's view of x, the body must
 * define P "xn"; the result is P "Exit_x". */
#define LOOP_HEAD(P, X, N, pi, I0)                                                                        \
  I0 ENTER(P "Enter_i", P "i0", P "frame", false, pi, TI)                             \
  ENTER(P "Enter_x", X, P "frame", false, pi, TF) ENTER(P "Enter_n", N, P "frame", true, pi, TI)        \
  MERGE(P "Merge_i", P "Enter_i", P "Next_i", TI) MERGE(P "Merge_x", P "Enter_x", P "Next_x", TF)          \
  "node { name: \"" P "Less\" op: \"Less\"" IN(P "Merge_i") IN(P "Enter_n") TI " }\n"                    \
  "node { name: \"" P "LoopCond\" op: \"LoopCond\"" IN(P "Less") " }\n"                                   \
  SWITCH(P "Switch_i", P "Merge_i", P "LoopCond", TI) SWITCH(P "Switch_x", P "Merge_x", P "LoopCond", TF) \
  ONE("Identity", P "i", P "Switch_i:1", TI) ONE("Identity", P "x", P "Switch_x:1", TF)                   \
  CI_CTRL(P "one", 1, P "i") "node { name: \"" P "inc\" op: \"AddV2\"" IN(P "i") IN(P "one") TI " }\n"    \
  ONE("NextIteration", P "Next_i", P "inc", TI) ONE("NextIteration", P "Next_x", P "xn", TF)              \
  ONE("Exit", P "Exit_i", P "Switch_i", TI) ONE("Exit", P "Exit_x", P "Switch_x", TF)

/* x <- tanh(x * a) + x: the gradient needs every iteration's x and tanh. */
#define BODY1(P, A, pi) ENTER(P "Enter_a", A, P "frame", true, pi, TF) N2(P "xa", "Mul", P "x", P "Enter_a")    \
  N1(P "th", "Tanh", P "xa") N2(P "xn", "AddV2", P "th", P "x")
#define CI_ROOT(name, v) \
  "node { name: \"" name "\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } }" \
  " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: " #v " } } } }\n"
#define LOOP1(pi) LOOP_HEAD("w/", "x0", "n", pi, CI_ROOT("w/i0", 0)) BODY1("w/", "a", pi) N2("y", "Mul", "w/Exit_x", "w/Exit_x")

#define CASE1(label, pi, iters)                                                                            \
  {label, LOOP1(pi), "y", 3, {{"x0", S2(2, 2)}, {"a", S2(2, 2), 0.5, 1.5}, {"n", S0, iters, iters, false, true}}}

static const gc_case simple[] = {
    CASE1("0 iterations", 10, 0), CASE1("1 iteration", 10, 1), CASE1("5 iterations, parallel 10", 10, 5),
    CASE1("5 iterations, parallel 1", 1, 5),
};

Test(grad_while, iterations_and_invariants) { gc_check_all(simple, sizeof simple / sizeof *simple, BOTH, 2); }

/* Nested: the outer loop runs n times, each running an inner loop m times
 * on z (starting at the outer x) with invariants from both levels: a from
 * the root (entered twice) and the outer iteration's x itself. */
#define NESTED(pi)                                                                                         \
  LOOP_HEAD("o/", "x0", "n", pi, CI_ROOT("o/i0", 0)) ENTER("o/Enter_a", "a", "o/frame", true, pi, TF)      \
  ENTER("o/Enter_m", "m", "o/frame", true, pi, TI)                                                         \
  LOOP_HEAD("o/in/", "o/x", "o/Enter_m", pi, CI_CTRL("o/in/i0", 0, "o/x"))                                 \
  ENTER("o/in/Enter_a", "o/Enter_a", "o/in/frame", true, pi, TF)                                           \
  ENTER("o/in/Enter_b", "o/x", "o/in/frame", true, pi, TF) N2("o/in/xa", "Mul", "o/in/x", "o/in/Enter_a")  \
  N1("o/in/th", "Tanh", "o/in/xa") N2("o/in/xb", "Mul", "o/in/x", "o/in/Enter_b")                          \
  N2("o/in/xn", "AddV2", "o/in/th", "o/in/xb") N2("o/xm", "Mul", "o/in/Exit_x", "o/Enter_a")               \
  N1("o/xn", "Tanh", "o/xm") N1("y", "Identity", "o/Exit_x")

#define NCASE(label, pi, n, m)                                                                             \
  {label, NESTED(pi), "y", 4,                                                                              \
   {{"x0", S2(2, 2)}, {"a", S2(2, 2), 0.5, 1.5}, {"n", S0, n, n, false, true}, {"m", S0, m, m, false, true}}}

static const gc_case nested[] = {
    NCASE("nested 3 x 2, parallel 10", 10, 3, 2), NCASE("nested 2 x 3, parallel 1", 1, 2, 3),
    NCASE("nested, inner 0 iterations", 10, 2, 0), NCASE("nested, outer 0 iterations", 10, 0, 2),
};

Test(grad_while, nested_with_invariants_at_each_level) {
  gc_check_all(nested, sizeof nested / sizeof *nested, BOTH, 2);
}

/* A cond in the body: x <- tanh(x a) when sum(x) > 0, else sin(x) a; the
 * backward loop must pop the branch values only in the iterations that
 * pushed them. */
#define AXES(name, ctrl) \
  "node { name: \"" name "\" op: \"Const\" input: \"^" ctrl "\" attr { key: \"dtype\" value { type: DT_INT32 } }" \
  " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 0 int_val: 1 } } } }\n"
#define COND_LOOP(pi)                                                                                      \
  LOOP_HEAD("w/", "x0", "n", pi, CI_ROOT("w/i0", 0)) ENTER("w/Enter_a", "a", "w/frame", true, pi, TF)      \
  AXES("w/ax", "w/x") NX("w/s", "Sum", IN("w/x") IN("w/ax"), "")                                           \
  "node { name: \"w/z\" op: \"ZerosLike\"" IN("w/s") AT("T") " }\n"                                        \
  "node { name: \"w/pred\" op: \"Greater\"" IN("w/s") IN("w/z") AT("T") " }\n"                             \
  SWITCH("w/c/sx", "w/x", "w/pred", TF) SWITCH("w/c/sa", "w/Enter_a", "w/pred", TF)                        \
  N2("w/c/ta", "Mul", "w/c/sx:1", "w/c/sa:1") N1("w/c/t", "Tanh", "w/c/ta")                                \
  N1("w/c/fs", "Sin", "w/c/sx:0") N2("w/c/f", "Mul", "w/c/fs", "w/c/sa:0")                                 \
  MERGE("w/xn", "w/c/f", "w/c/t", TF) N1("y", "Identity", "w/Exit_x")

static const gc_case cond_loop[] = {
    {"cond in loop, 6 iterations, parallel 10", COND_LOOP(10), "y", 3,
     {{"x0", S2(2, 2)}, {"a", S2(2, 2), -1.5, 1.5}, {"n", S0, 6, 6, false, true}}},
    {"cond in loop, 6 iterations, parallel 1", COND_LOOP(1), "y", 3,
     {{"x0", S2(2, 2)}, {"a", S2(2, 2), -1.5, 1.5}, {"n", S0, 6, 6, false, true}}},
};

Test(grad_while, cond_inside_loop) { gc_check_all(cond_loop, 2, BOTH, 2); }

/* Allocation failure at every step of differentiating the nested loop (the
 * backward loops, stacks and accumulators): DFX_ENOMEM and no leak each
 * time, until it succeeds. */
Test(grad_while, out_of_memory_at_every_allocation) {
  static const char body[] = NESTED(10);
  const char *ph = "node { name: \"x0\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_DOUBLE } } }\n"
                   "node { name: \"a\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_DOUBLE } } }\n"
                   "node { name: \"n\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_INT32 } } }\n"
                   "node { name: \"m\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_INT32 } } }\n";
  size_t cap = sizeof body * 2 + strlen(ph) + 1, o = 0;
  char *text = malloc(cap);
  o += (size_t)snprintf(text, cap, "%s", ph);
  for (const char *p = body; *p; p++) {
    if (p[0] == '$' && p[1] == 'T') {
      o += (size_t)snprintf(text + o, cap - o, "DT_DOUBLE");
      p++;
    } else {
      text[o++] = *p;
    }
  }
  text[o] = 0;
  dfx_graph *g = eu_graph(text);
  free(text);
  dfx_port yp = {"y", 0}, xs[2] = {{"x0", 0}, {"a", 0}};
  bool ok = false;
  for (long long n = 1; n < 100000 && !ok; n += 1 + n / 64) {
    char *dx[2] = {(char *)"junk", (char *)"junk"};
    dfx_graph *gg = NULL;
    eu_alloc.fail_at = eu_alloc.n_allocs + n;
    dfx_code c = dfx_graph_gradients(g, &yp, 1, xs, 2, NULL, NULL, &gg, dx, NULL);
    eu_alloc.fail_at = 0;
    if (c == DFX_OK) {
      ok = true;
      dfx_free(dx[0]);
      dfx_free(dx[1]);
      dfx_graph_free(gg);
      break;
    }
    cr_assert_eq(c, DFX_ENOMEM, "allocation %lld: %s", n, dfx_code_name(c));
    cr_assert(!gg && !dx[0] && !dx[1]);
  }
  cr_assert(ok);
  dfx_graph_free(g);
}
