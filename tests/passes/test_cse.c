/* test_cse.c - the cse pass: equal pure nodes (op, attrs, inputs, control
 * inputs as a set) merge, whole chains at once; different attrs, control
 * inputs or frames, stateful ops and kept nodes do not. */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gtext.h"
#include "ptest.h"

TestSuite(cse, .init = eu_setup, .fini = eu_teardown, .timeout = 30);

Test(cse, equal_chains_merge) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT")
                  GT_OP1("a1", "Neg", "x", "DT_FLOAT", "") GT_OP1("b1", "Square", "a1", "DT_FLOAT", "")
                  GT_OP1("a2", "Neg", "x", "DT_FLOAT", "") GT_OP1("b2", "Square", "a2", "DT_FLOAT", "")
                  GT_OP2("y", "Sub", "b1", "b2", "DT_FLOAT", ""),
              "cse", "y", "x", NULL);
  cr_assert(!pt_has(t.after, "a2") && !pt_has(t.after, "b2"));
  cr_assert_eq(t.removed, 2);
  pt_same_outputs(&t, (float[]){4});
  pt_free(&t);
}

Test(cse, equal_constants_merge_different_ones_do_not) {
  pt_case t;
  pt_optimize(&t,
              GT_CONST_F32("c1", 2, "") GT_CONST_F32("c2", 2, "") GT_CONST_F32("c3", 3, "")
                  GT_OP2("s", "Add", "c1", "c2", "DT_FLOAT", "") GT_OP2("y", "Add", "s", "c3", "DT_FLOAT", ""),
              "cse", "y", NULL, NULL);
  cr_assert(pt_has(t.after, "c1") && !pt_has(t.after, "c2") && pt_has(t.after, "c3"));
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}

Test(cse, control_inputs_and_attrs_must_match) {
  pt_case t;
  pt_optimize(&t,
              GT_PLACEHOLDER("x", "DT_FLOAT") GT_NOOP("g1", "") GT_NOOP("g2", GT_INPUT("^x")) /* g1 and g2 differ */
                  GT_OP1("a", "Neg", "x", "DT_FLOAT", GT_INPUT("^g1"))
                  GT_OP1("b", "Neg", "x", "DT_FLOAT", GT_INPUT("^g2"))
                  GT_OP1("c", "Neg", "x", "DT_FLOAT", GT_INPUT("^g1"))
                  "node { name: 'm1' op: 'Mean' input: 'x' input: 'ax' attr { key: 'T' value { type: DT_FLOAT } }"
                  " attr { key: 'keep_dims' value { b: true } } }\n"
                  "node { name: 'm2' op: 'Mean' input: 'x' input: 'ax' attr { key: 'T' value { type: DT_FLOAT } }"
                  " attr { key: 'keep_dims' value { b: false } } }\n"
                  "node { name: 'ax' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }"
                  " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 0 } } } } } }\n"
                  GT_OP2("s", "AddN", "a", "b", "DT_FLOAT", " input: 'c' input: 'm1' input: 'm2' attr { key: 'N' value { i: 5 } }"),
              "cse", "s", "x", NULL);
  cr_assert(pt_has(t.after, "a") && pt_has(t.after, "b") && !pt_has(t.after, "c"), "c equals a (same ^g1)");
  cr_assert(pt_has(t.after, "m1") && pt_has(t.after, "m2"), "keep_dims differs");
  pt_same_outputs(&t, (float[]){1.25f});
  pt_free(&t);
}

Test(cse, stateful_ops_never_merge) {
  pt_case t;
  pt_optimize(&t,
              "node { name: 'shape' op: 'Const' attr { key: 'dtype' value { type: DT_INT32 } }"
              " attr { key: 'value' value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 4 } } } }\n"
              "node { name: 'r1' op: 'RandomUniform' input: 'shape' attr { key: 'T' value { type: DT_INT32 } }"
              " attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
              "node { name: 'r2' op: 'RandomUniform' input: 'shape' attr { key: 'T' value { type: DT_INT32 } }"
              " attr { key: 'dtype' value { type: DT_FLOAT } } }\n"
              GT_OP2("y", "Sub", "r1", "r2", "DT_FLOAT", ""),
              "cse", "y", NULL, NULL);
  cr_assert(pt_has(t.after, "r1") && pt_has(t.after, "r2"));
  pt_free(&t);
}

/* Both fetched: both names must still be there. */
Test(cse, kept_nodes_are_not_merged_away) {
  pt_case t;
  pt_optimize(&t, GT_PLACEHOLDER("x", "DT_FLOAT") GT_OP1("a", "Neg", "x", "DT_FLOAT", "")
                      GT_OP1("b", "Neg", "x", "DT_FLOAT", ""),
              "cse", "a,b", "x", NULL);
  cr_assert(pt_has(t.after, "a") && pt_has(t.after, "b"));
  pt_same_outputs(&t, (float[]){7});
  pt_free(&t);
}

/* Two loops with the same body ops: their nodes read different Enters, so
 * nothing of one merges into the other, and both Exits keep their values. */
Test(cse, equal_loops_stay_apart) {
  pt_case t;
  pt_optimize(&t, GT_COUNTER_LOOP("a/", 0, 10, 1, 10) GT_COUNTER_LOOP("b/", 0, 10, 1, 10), "cse", "a/Exit,b/Exit",
              NULL, NULL);
  cr_assert(pt_has(t.after, "b/Less") && pt_has(t.after, "b/add") && pt_has(t.after, "b/limit"));
  pt_same_outputs(&t, NULL);
  pt_free(&t);
}
