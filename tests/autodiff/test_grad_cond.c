/* test_grad_cond.c - numeric checks of gradients through tf.cond lowerings
 * (autodiff/grad_cond.c): each branch taken, a tensor used in both the
 * branch and outside, a branch that ignores an input, nested conds. The
 * predicate is p > 0 for a fed p, so each case runs with p positive and
 * negative. */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gcheck.h"
#include "gtext_ad.h"

TestSuite(grad_cond, .init = eu_setup, .fini = eu_teardown, .timeout = 120);

static const dfx_dtype BOTH[] = {DFX_F64, DFX_F32};

#define PRED                                                                                              \
  "node { name: \"zero\" op: \"ZerosLike\"" IN("p") AT("T") " }\n"                                         \
  "node { name: \"pred\" op: \"Greater\"" IN("p") IN("zero") AT("T") " }\n"
#define SW(name, x, pred) "node { name: \"" name "\" op: \"Switch\"" IN(x) IN(pred) AT("T") " }\n"
#define MERGE2(name, a, b) "node { name: \"" name "\" op: \"Merge\"" IN(a) IN(b) AT("T") AI("N", 2) " }\n"

/* y = cond(p > 0, x * w + exp(x), x^2) * x */
#define COND1                                                                                             \
  PRED SW("c/sx", "x", "pred") SW("c/sw", "w", "pred") N1("c/xt", "Identity", "c/sx:1")                    \
  N1("c/wt", "Identity", "c/sw:1") N2("c/m", "Mul", "c/xt", "c/wt") N1("c/e", "Exp", "c/xt")                \
  N2("c/yt", "AddV2", "c/m", "c/e") N1("c/yf", "Square", "c/sx:0") MERGE2("c/out", "c/yf", "c/yt")          \
  N2("y", "Mul", "c/out", "x")

/* nested: cond(p > 0, cond(q > 0, sin x, x * w), w^2) */
#define COND2                                                                                             \
  PRED "node { name: \"zq\" op: \"ZerosLike\"" IN("q") AT("T") " }\n"                                       \
  "node { name: \"predq\" op: \"Greater\"" IN("q") IN("zq") AT("T") " }\n"                                  \
  SW("o/sx", "x", "pred") SW("o/sw", "w", "pred") "node { name: \"o/sq\" op: \"Switch\"" IN("predq") IN("pred") " attr { key: \"T\" value { type: DT_BOOL } } }\n"                              \
  SW("o/i/sx", "o/sx:1", "o/sq:1") SW("o/i/sw", "o/sw:1", "o/sq:1") N1("o/i/t", "Sin", "o/i/sx:1")          \
  N2("o/i/f", "Mul", "o/i/sx:0", "o/i/sw:0") MERGE2("o/i/out", "o/i/f", "o/i/t")                           \
  N1("o/f", "Square", "o/sw:0") MERGE2("y", "o/f", "o/i/out")

static const gc_case cases[] = {
    {"cond, true branch", COND1, "y", 3, {{"x", S2(2, 2)}, {"w", S2(2, 2)}, {"p", S0, 0.5, 1, true}}},
    {"cond, false branch", COND1, "y", 3, {{"x", S2(2, 2)}, {"w", S2(2, 2)}, {"p", S0, -1, -0.5, true}}},
    {"nested cond, true/true", COND2, "y", 4, {{"x", S1(3)}, {"w", S1(3)}, {"p", S0, 0.5, 1, true}, {"q", S0, 0.5, 1, true}}},
    {"nested cond, true/false", COND2, "y", 4, {{"x", S1(3)}, {"w", S1(3)}, {"p", S0, 0.5, 1, true}, {"q", S0, -1, -0.5, true}}},
    {"nested cond, false", COND2, "y", 4, {{"x", S1(3)}, {"w", S1(3)}, {"p", S0, -1, -0.5, true}, {"q", S0, 0.5, 1, true}}},
};

Test(grad_cond, branches_and_nesting) { gc_check_all(cases, sizeof cases / sizeof *cases, BOTH, 2); }
