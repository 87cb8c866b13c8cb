/* test_identity.c - the identity pass: consumers read past an Identity;
 * fetched Identities, Identities with control inputs and the pivots a
 * cond's constants hang off (control consumers) stay. */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gtext.h"
#include "ptest.h"

TestSuite(identity, .init = eu_setup, .fini = eu_teardown, .timeout = 30);

Test(identity, a_chain_goes) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_OP1("i1", "Identity", "x", "DT_FLOAT", "")
                  GT_OP1("i2", "Identity", "i1", "DT_FLOAT", "") GT_OP1("y", "Neg", "i2", "DT_FLOAT", ""),
              "identity", "y", "x", NULL);
  cr_assert(!pt_has(t.after, "i1") && !pt_has(t.after, "i2"));
  cr_assert_eq(t.removed, 2);
  pt_same_outputs(&t, (float[]){1.5f});
  pt_free(&t);
}

Test(identity, fetched_and_controlled_identities_stay) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_NOOP("gate", "")
                  GT_OP1("fetched", "Identity", "x", "DT_FLOAT", "")
                  GT_OP1("gated", "Identity", "x", "DT_FLOAT", GT_INPUT("^gate"))
                  GT_OP2("y", "Add", "fetched", "gated", "DT_FLOAT", ""),
              "identity", "y,fetched", "x", NULL);
  cr_assert(pt_has(t.after, "fetched") && pt_has(t.after, "gated"));
  cr_assert_eq(t.removed, 0);
  pt_free(&t);
}

/* tf.cond: the branch constants hang off Identity pivots by control edges;
 * rewiring those to the Switch would make the dead branch's constant live. */
static const char cond[] =
    GT_PLACEHOLDER("x", "DT_FLOAT") GT_PLACEHOLDER("p", "DT_BOOL")
    GT_SWITCH("c/Switch", "x", "p", "DT_FLOAT")
    GT_OP1("c/t", "Identity", "c/Switch:1", "DT_FLOAT", "")
    GT_OP1("c/f", "Identity", "c/Switch:0", "DT_FLOAT", "")
    GT_CONST_F32("c/one", 1, GT_INPUT("^c/t")) GT_CONST_F32("c/two", 2, GT_INPUT("^c/f"))
    GT_OP2("c/add", "Add", "c/t", "c/one", "DT_FLOAT", "")
    GT_OP2("c/mul", "Mul", "c/f", "c/two", "DT_FLOAT", "")
    GT_MERGE2("c/Merge", "c/mul", "c/add", "DT_FLOAT", "");

Test(identity, cond_pivots_stay) {
  pt_case t;
  pt_optimize(&t, cond, "identity", "c/Merge", NULL, NULL);
  cr_assert(pt_has(t.after, "c/t") && pt_has(t.after, "c/f"));
  pt_free(&t);
}

/* In a loop with a cond in its body, whatever the pass does keeps every
 * iteration's value. */
Test(identity, loop_with_cond_keeps_its_value) {
  pt_case t;
  pt_optimize(&t, GT_COND_IN_LOOP(20, 10), "identity", "w/Exit", NULL, NULL);
  cr_assert_eq(pt_same_outputs(&t, NULL), DFX_OK);
  pt_free(&t);
}
