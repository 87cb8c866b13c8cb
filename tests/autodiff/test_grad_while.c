/* test_grad_while.c - numeric checks of gradients through TF1 while loops
 * (autodiff/grad_while.c): 0, 1 and many iterations, loop invariants,
 * bodies whose gradient needs every iteration's forward values, nested
 * loops with invariants at each level, a cond inside a loop, and
 * parallel_iterations 1 and 10. The iteration count is a fed int32 n. */
#include <criterion/criterion.h>

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
