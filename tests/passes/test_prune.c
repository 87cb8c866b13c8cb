/* test_prune.c - the prune pass: with a run's ports, only what the
 * fetches and targets need stays (inside loops too); fed nodes keep their
 * producers; without ports only what other passes left unused goes. */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gtext.h"
#include "ptest.h"

TestSuite(prune, .init = eu_setup, .fini = eu_teardown, .timeout = 30);

static const char two_outputs[] =
    GT_PLACEHOLDER("x", "DT_FLOAT")
    GT_OP1("neg", "Neg", "x", "DT_FLOAT", "")
    GT_OP1("sq", "Square", "x", "DT_FLOAT", "")
    GT_OP1("sq2", "Square", "sq", "DT_FLOAT", "")
    GT_NOOP("side", GT_INPUT("^sq2"));

Test(prune, keeps_what_the_fetch_needs) {
  pt_case t;
  pt_optimize(&t, two_outputs, "prune", "neg", "x", NULL);
  cr_assert(pt_has(t.after, "x") && pt_has(t.after, "neg"));
  cr_assert(!pt_has(t.after, "sq") && !pt_has(t.after, "sq2") && !pt_has(t.after, "side"));
  cr_assert_eq(t.removed, 3);
  pt_same_outputs(&t, (float[]){2.5f});
  pt_free(&t);
}

Test(prune, a_target_keeps_its_control_inputs) {
  pt_case t;
  pt_optimize(&t, two_outputs, "prune", "neg", "x", "side");
  cr_assert(pt_has(t.after, "side") && pt_has(t.after, "sq2") && pt_has(t.after, "sq"));
  cr_assert_eq(pt_count(t.after), 5);
  pt_same_outputs(&t, (float[]){-1});
  pt_free(&t);
}

/* Feeding sq does not cut x -> sq: a run that does not feed it still works. */
Test(prune, a_fed_node_keeps_its_producers) {
  pt_case t;
  pt_optimize(&t, two_outputs, "prune", "sq2", "sq", NULL);
  cr_assert(pt_has(t.after, "x") && pt_has(t.after, "sq") && pt_has(t.after, "sq2"));
  cr_assert(!pt_has(t.after, "neg"));
  pt_same_outputs(&t, (float[]){3});
  pt_free(&t);
}

/* A loop whose Exit is fetched stays whole; a second, unfetched loop goes. */
Test(prune, loops_stay_whole_or_go_whole) {
  pt_case t;
  pt_optimize(&t, GT_COUNTER_LOOP("a/", 0, 10, 1, 10) GT_COUNTER_LOOP("b/", 0, 5, 2, 10), "prune", "a/Exit", NULL,
              NULL);
  cr_assert_eq(pt_count(t.after), 12, "loop a's 12 nodes");
  cr_assert(pt_has(t.after, "a/NextIteration") && pt_has(t.after, "a/step"));
  cr_assert(!pt_has(t.after, "b/Enter"));
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}

/* Without ports every output stays, even one the others do not need. */
Test(prune, without_ports_outputs_stay) {
  pt_case t;
  pt_optimize(&t, two_outputs, "prune", NULL, NULL, NULL);
  cr_assert_eq(pt_count(t.after), pt_count(t.before));
  cr_assert_eq(t.removed, 0);
  pt_free(&t);
}

/* ... but what folding leaves unused goes: 'a' and 'b' once 'c' is a Const. */
Test(prune, without_ports_leftovers_of_other_passes_go) {
  pt_case t;
  pt_optimize(&t,
              GT_CONST_F32("a", 2, "") GT_CONST_F32("b", 3, "") GT_OP2("c", "Mul", "a", "b", "DT_FLOAT", "")
                  GT_PLACEHOLDER("x", "DT_FLOAT") GT_OP2("y", "Add", "x", "c", "DT_FLOAT", ""),
              "constfold,prune", NULL, NULL, NULL);
  cr_assert(!pt_has(t.after, "a") && !pt_has(t.after, "b"));
  cr_assert_str_eq(pt_op(t.after, "c"), "Const");
  cr_assert_eq(pt_count(t.after), 3);
  pt_free(&t);
}
