/* test_ewfuse.c - the ewfuse pass: trees of same-shape elementwise float
 * ops become one _FusedElementwise named as the root, with the same bits;
 * kept, fed or shared middles, unproven or broadcast shapes, another
 * dtype or device stay apart; control inputs, conds (dead branches) and
 * loops keep their values and deadness. */
#include <criterion/criterion.h>

#include "eutil.h"
#include "gtext.h"
#include "ptest.h"
#include "shapes.h"
#include "tgraph.h"

TestSuite(ewfuse, .init = eu_setup, .fini = eu_teardown, .timeout = 60);

static const int64_t X_DIMS[2] = {4, 300}; /* several of the kernel's blocks */

/* A placeholder of shape [4, 300] (nd 2), [] (nd 0), or no shape (nd -1). */
static void placeholder(tg *b, const char *name, const char *dtype, int nd) {
  tg_printf(b, "node { name: \"%s\" op: \"Placeholder\" attr { key: \"dtype\" value { type: %s } }", name, dtype);
  if (nd >= 0) {
    tg_printf(b, " attr { key: \"shape\" value { shape {");
    for (int d = 0; d < nd; d++) tg_printf(b, " dim { size: %lld }", (long long)X_DIMS[d]);
    tg_printf(b, " } } }");
  }
  tg_printf(b, " }\n");
}

/* y = Tanh(x * a + b) * c with scalars a, c and b like x. */
static void chain(tg *b, int x_rank) {
  b->seed = 11;
  placeholder(b, "x", "DT_FLOAT", x_rank);
  tg_const(b, "a", 0, NULL, 0.5f, 1.5f, NULL, NULL);
  tg_const(b, "b", 2, X_DIMS, -2, 2, NULL, NULL);
  tg_const(b, "c", 0, NULL, -3, 3, NULL, NULL);
  tg_node(b, "mul", "Mul", "x,a", "");
  tg_node(b, "add", "AddV2", "mul,b", "");
  tg_node(b, "th", "Tanh", "add", "");
  tg_node(b, "y", "Mul", "c,th", "");
}

static void same(const pt_case *t, tg *b, const char *fetches) {
  dfx_tensor *x = tg_tensor(b, 2, X_DIMS, -4, 4);
  tg_same(t->before, t->after, "x", &x, fetches, 0);
  dfx_tensor_free(x);
}

static void attr_ops(const dfx_graph *g, const char *node, const char *want) {
  int id = dfx_graph_node_find(g, node);
  cr_assert(id >= 0);
  char got[256] = "";
  /* The ops list as "A,B,...": read through the internal node record. */
  const dfx_attr_list *l = dfx__attr_list(&g->nodes[id], "ops");
  cr_assert(l && l->kind == DFX_ATTR_S);
  size_t used = 0;
  for (int k = 0; k < l->n; k++)
    used += (size_t)snprintf(got + used, sizeof got - used, "%s%.*s", k ? "," : "", (int)l->v.s[k].len, l->v.s[k].ptr);
  cr_assert_str_eq(got, want);
}

static void type_is(const dfx_graph *g, const char *node, dfx_dtype want) {
  dfx_dtype t = DFX_INVALID;
  cr_assert_eq(dfx_graph_node_attr_type(g, dfx_graph_node_find(g, node), "T", &t, NULL), DFX_OK);
  cr_assert_eq(t, want);
}

static int64_t attr_int(const dfx_graph *g, const char *node, const char *name) {
  int64_t v = -1;
  cr_assert_eq(dfx_graph_node_attr_int(g, dfx_graph_node_find(g, node), name, &v, NULL), DFX_OK);
  return v;
}

Test(ewfuse, a_chain_becomes_one_node_named_as_its_last) {
  tg b = {0};
  chain(&b, 2);
  pt_case t;
  pt_optimize(&t, b.s, "ewfuse", "y", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "y"), "_FusedElementwise");
  cr_assert(!pt_has(t.after, "mul") && !pt_has(t.after, "add") && !pt_has(t.after, "th"));
  cr_assert_eq(t.removed, 3);
  cr_assert_eq(t.rewritten, 1);
  attr_ops(t.after, "y", "Mul,AddV2,Tanh,Mul");
  cr_assert_eq(attr_int(t.after, "y", "N"), 4); /* x, a, b, c */
  /* Static shape inference knows the fused node's shape, for the passes
   * after it. */
  dfx_shapes *s = NULL;
  cr_assert_eq(dfx__shapes_infer(t.after, NULL, &s, NULL), DFX_OK);
  const dfx_tinfo *ti = dfx__shapes_output(s, dfx_graph_node_find(t.after, "y"), 0);
  cr_assert(ti && ti->shape.rank == 2 && ti->shape.dims[0] == 4 && ti->shape.dims[1] == 300);
  dfx__shapes_free(s);
  same(&t, &b, "y");
  pt_free(&t);
  tg_free(&b);
}

Test(ewfuse, a_tree_and_every_opcode) {
  static const char *const ops[] = {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "Maximum", "Minimum",
                                    "SquaredDifference", "Neg", "Abs", "Square", "Reciprocal", "Inv", "Sqrt",
                                    "Rsqrt", "Exp", "Expm1", "Log", "Log1p", "Tanh", "Sigmoid", "Relu", "Relu6",
                                    "Elu", "Selu", "Softplus", "Softsign"};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    tg b = {0};
    b.seed = 5;
    placeholder(&b, "x", "DT_FLOAT", 2);
    tg_const(&b, "z", 2, X_DIMS, -5, 5, NULL, NULL);
    bool bin = k < 9;
    char in[16];
    snprintf(in, sizeof in, bin ? "x,z" : "x");
    tg_node(&b, "o", ops[k], in, "");
    tg_node(&b, "y", "Mul", "o,x", "");
    pt_case t;
    pt_optimize(&t, b.s, "ewfuse", "y", "x", NULL);
    cr_assert_str_eq(pt_op(t.after, "y"), "_FusedElementwise", "%s", ops[k]);
    cr_assert(!pt_has(t.after, "o"), "%s", ops[k]);
    same(&t, &b, "y");
    pt_free(&t);
    tg_free(&b);
  }
  /* Sigmoid(x) * Tanh(z) + Relu(x - z): six steps, two inputs. */
  tg b = {0};
  b.seed = 6;
  placeholder(&b, "x", "DT_FLOAT", 2);
  tg_const(&b, "z", 2, X_DIMS, -5, 5, NULL, NULL);
  tg_node(&b, "sg", "Sigmoid", "x", "");
  tg_node(&b, "tz", "Tanh", "z", "");
  tg_node(&b, "gate", "Mul", "sg,tz", "");
  tg_node(&b, "d", "Sub", "x,z", "");
  tg_node(&b, "r", "Relu", "d", "");
  tg_node(&b, "y", "Add", "gate,r", "");
  pt_case t;
  pt_optimize(&t, b.s, "ewfuse", "y", "x", NULL);
  cr_assert_eq(pt_count(t.after), 3); /* x, z, y */
  attr_ops(t.after, "y", "Sigmoid,Tanh,Mul,Sub,Relu,Add");
  cr_assert_eq(attr_int(t.after, "y", "N"), 2);
  same(&t, &b, "y");
  pt_free(&t);
  tg_free(&b);
}

Test(ewfuse, kept_fed_and_shared_middles_cut_the_chain) {
  tg b = {0};
  chain(&b, 2);
  pt_case t;
  /* add fetched: {mul, add} under "add", {th, y} under "y". */
  pt_optimize(&t, b.s, "ewfuse", "y,add", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "add"), "_FusedElementwise");
  cr_assert_str_eq(pt_op(t.after, "y"), "_FusedElementwise");
  attr_ops(t.after, "add", "Mul,AddV2");
  attr_ops(t.after, "y", "Tanh,Mul");
  same(&t, &b, "y,add");
  pt_free(&t);
  /* add fed: it stays, and mul is alone; a feed may have any shape, so
   * nothing after it is proven to have x's and th and y stay too. */
  pt_optimize(&t, b.s, "ewfuse", "y", "x,add", NULL);
  cr_assert_str_eq(pt_op(t.after, "add"), "AddV2");
  cr_assert_str_eq(pt_op(t.after, "mul"), "Mul");
  cr_assert_str_eq(pt_op(t.after, "y"), "Mul");
  cr_assert_eq(t.rewritten, 0);
  dfx_tensor *vals[2] = {tg_tensor(&b, 2, X_DIMS, -4, 4), tg_tensor(&b, 2, X_DIMS, -4, 4)};
  tg_same(t.before, t.after, "x,add", vals, "y", 0);
  dfx_tensor_free(vals[0]);
  dfx_tensor_free(vals[1]);
  pt_free(&t);
  /* add also read by another node. */
  tg_node(&b, "other", "Neg", "add", "");
  pt_optimize(&t, b.s, "ewfuse", "y,other", "x", NULL);
  attr_ops(t.after, "add", "Mul,AddV2");
  attr_ops(t.after, "y", "Tanh,Mul");
  cr_assert_str_eq(pt_op(t.after, "other"), "Neg");
  same(&t, &b, "y,other");
  pt_free(&t);
  tg_free(&b);
}

Test(ewfuse, unproven_shapes_broadcasts_dtypes_and_devices_stay) {
  pt_case t;
  /* No static shape for x: nothing is proven. */
  tg b = {0};
  chain(&b, -1);
  pt_optimize(&t, b.s, "ewfuse", "y", "x", NULL);
  cr_assert_eq(t.rewritten, 0);
  pt_free(&t);
  tg_free(&b);
  /* A [300] bias broadcast over x: that Add is out; the rest fuses. */
  b = (tg){0};
  b.seed = 2;
  placeholder(&b, "x", "DT_FLOAT", 2);
  tg_const(&b, "bias", 1, (int64_t[]){300}, -1, 1, NULL, NULL);
  tg_node(&b, "e", "Exp", "x", "");
  tg_node(&b, "biased", "Add", "e,bias", "");
  tg_node(&b, "s", "Sigmoid", "biased", "");
  tg_node(&b, "y", "Neg", "s", "");
  pt_optimize(&t, b.s, "ewfuse", "y", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "e"), "Exp");
  cr_assert_str_eq(pt_op(t.after, "biased"), "Add");
  attr_ops(t.after, "y", "Sigmoid,Neg");
  same(&t, &b, "y");
  pt_free(&t);
  tg_free(&b);
  /* Another device in the middle. */
  b = (tg){0};
  chain(&b, 2);
  tg_printf(&b, "node { name: \"y2\" op: \"Neg\" input: \"y\" device: \"/device:CPU:1\""
                " attr { key: \"T\" value { type: DT_FLOAT } } }\n");
  pt_optimize(&t, b.s, "ewfuse", "y2", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "y2"), "Neg");
  attr_ops(t.after, "y", "Mul,AddV2,Tanh,Mul");
  pt_free(&t);
  tg_free(&b);
  /* int32 ops stay; a double chain fuses as double. */
  b = (tg){0};
  placeholder(&b, "d", "DT_DOUBLE", 2);
  tg_printf(&b, GT_CONST_I32("i", 3, "") GT_OP1("ni", "Neg", "i", "DT_INT32", "") GT_OP1("ai", "Abs", "ni", "DT_INT32", "")
                GT_OP1("nd", "Neg", "d", "DT_DOUBLE", "") GT_OP1("ad", "Abs", "nd", "DT_DOUBLE", ""));
  pt_optimize(&t, b.s, "ewfuse", "ai,ad", NULL, NULL);
  cr_assert_str_eq(pt_op(t.after, "ai"), "Abs");
  cr_assert_str_eq(pt_op(t.after, "ad"), "_FusedElementwise");
  type_is(t.after, "ad", DFX_F64);
  pt_free(&t);
  tg_free(&b);
}

/* The chain in a cond's true branch, with a control input in its middle;
 * fetching the branch's end directly when the branch is not taken is a
 * dead fetch before and after. */
Test(ewfuse, inside_a_cond_with_control_inputs) {
  tg b = {0};
  b.seed = 4;
  placeholder(&b, "x", "DT_FLOAT", 2);
  tg_printf(&b, "node { name: \"p\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_BOOL } }"
                " attr { key: \"shape\" value { shape { } } } }\n");
  tg_printf(&b, GT_SWITCH("sw", "x", "p", "DT_FLOAT"));
  tg_node(&b, "t", "Identity", "sw:1", "");
  tg_node(&b, "f", "Identity", "sw:0", "");
  tg_const(&b, "a", 0, NULL, 0.5f, 1.5f, NULL, "^t");
  tg_const(&b, "bb", 2, X_DIMS, -2, 2, NULL, "^t");
  tg_printf(&b, GT_NOOP("side", GT_INPUT("^t")));
  tg_node(&b, "mul", "Mul", "t,a", "");
  tg_node(&b, "add", "Add", "mul,bb,^side", "");
  tg_node(&b, "th", "Sigmoid", "add", "");
  tg_node(&b, "nf", "Neg", "f", "");
  tg_printf(&b, GT_MERGE2("merge", "th", "nf", "DT_FLOAT", ""));
  pt_case t;
  pt_optimize(&t, b.s, "ewfuse", "merge,th", "x,p", NULL);
  cr_assert_str_eq(pt_op(t.after, "th"), "_FusedElementwise");
  attr_ops(t.after, "th", "Mul,Add,Sigmoid");
  /* The middle's control input moved to the fused node. */
  int id = dfx_graph_node_find(t.after, "th");
  bool has_side = false;
  for (int k = 0; k < dfx_graph_node_num_control_inputs(t.after, id); k++)
    has_side |= dfx_graph_node_control_input(t.after, id, k) == dfx_graph_node_find(t.after, "side");
  cr_assert(has_side);
  dfx_tensor *x = tg_tensor(&b, 2, X_DIMS, -2, 2);
  for (int pv = 0; pv < 2; pv++) {
    dfx_tensor *p = dfx_tensor_new(DFX_BOOL, NULL, 0);
    *(uint8_t *)dfx_tensor_data(p) = (uint8_t)pv;
    tg_same(t.before, t.after, "x,p", (dfx_tensor *[]){x, p}, "merge", 0);
    /* th itself: live when p, dead (an error naming it) otherwise. */
    dfx_tensor *o1[2] = {0}, *o2[2] = {0};
    dfx_code c1 = tg_run(t.before, "x,p", (dfx_tensor *[]){x, p}, "th", o1);
    dfx_code c2 = tg_run(t.after, "x,p", (dfx_tensor *[]){x, p}, "th", o2);
    cr_assert_eq(c1, c2, "p %d: %d before, %d after", pv, c1, c2);
    cr_assert_eq(c1 == DFX_OK, pv == 1);
    if (c1 == DFX_OK) tg_same(t.before, t.after, "x,p", (dfx_tensor *[]){x, p}, "th", 0);
    dfx_tensor_free(o1[0]);
    dfx_tensor_free(o2[0]);
    dfx_tensor_free(p);
  }
  dfx_tensor_free(x);
  pt_free(&t);
  tg_free(&b);
}

/* h = Tanh(h * a + b) each iteration of a while loop; the chain reads the
 * loop-carried h and loop constants. */
Test(ewfuse, inside_a_loop) {
  tg b = {0};
  b.seed = 8;
  placeholder(&b, "x", "DT_FLOAT", 2);
  tg_printf(&b, GT_CONST_I32("start", 0, "") GT_ENTER("w/Enter", "start", "DT_INT32", "w/while", false, 10)
                    GT_ENTER("w/Enter_h", "x", "DT_FLOAT", "w/while", false, 10)
                        GT_MERGE2("w/Merge", "w/Enter", "w/NextIteration", "DT_INT32", "")
                            GT_MERGE2("w/Merge_h", "w/Enter_h", "w/NextIteration_h", "DT_FLOAT", "")
                                GT_CONST_I32("w/limit", 5, GT_INPUT("^w/Merge"))
                                    GT_OP2("w/Less", "Less", "w/Merge", "w/limit", "DT_INT32", "")
                                        GT_LOOPCOND("w/LoopCond", "w/Less")
                                            GT_SWITCH("w/Switch", "w/Merge", "w/LoopCond", "DT_INT32")
                                                GT_SWITCH("w/Switch_h", "w/Merge_h", "w/LoopCond", "DT_FLOAT")
                                                    GT_OP1("w/i", "Identity", "w/Switch:1", "DT_INT32", "")
                                                        GT_OP1("w/h", "Identity", "w/Switch_h:1", "DT_FLOAT", "")
                                                            GT_CONST_I32("w/one", 1, GT_INPUT("^w/i"))
                                                                GT_OP2("w/add", "Add", "w/i", "w/one", "DT_INT32", ""));
  tg_const(&b, "w/a", 0, NULL, 0.5f, 1.5f, NULL, "^w/i");
  tg_const(&b, "w/b", 2, X_DIMS, -0.5f, 0.5f, NULL, "^w/i");
  tg_node(&b, "w/mul", "Mul", "w/h,w/a", "");
  tg_node(&b, "w/plus", "Add", "w/mul,w/b", "");
  tg_node(&b, "w/act", "Tanh", "w/plus", "");
  tg_printf(&b, GT_OP1("w/NextIteration", "NextIteration", "w/add", "DT_INT32", "")
                    GT_OP1("w/NextIteration_h", "NextIteration", "w/act", "DT_FLOAT", "")
                        GT_OP1("w/Exit", "Exit", "w/Switch_h", "DT_FLOAT", ""));
  pt_case t;
  pt_optimize(&t, b.s, "ewfuse", "w/Exit", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "w/act"), "_FusedElementwise");
  attr_ops(t.after, "w/act", "Mul,Add,Tanh");
  cr_assert_str_eq(pt_op(t.after, "w/add"), "Add"); /* int32 */
  same(&t, &b, "w/Exit");
  pt_free(&t);
  tg_free(&b);
}

Test(ewfuse, in_a_pipeline_after_the_default_passes) {
  tg b = {0};
  chain(&b, 2);
  pt_case t;
  pt_optimize(&t, b.s, "prune,identity,shapefold,constfold,arith,cse,remap,ewfuse", "y", "x", NULL);
  cr_assert_str_eq(pt_op(t.after, "y"), "_FusedElementwise");
  same(&t, &b, "y");
  pt_free(&t);
  tg_free(&b);
}

/* x, z: [?, 300]. The pass fuses on equal partial shapes; a run's batch
 * sizes decide the kernel's path: equal (one pass), 1 against 4
 * (broadcasting, the same bits), 3 against 4 (the same error). */
Test(ewfuse, unknown_batch_dims_fuse_and_runs_may_broadcast) {
  tg b = {0};
  b.seed = 9;
  for (const char *const *nm = (const char *const[]){"x", "z", NULL}; *nm; nm++)
    tg_printf(&b, "node { name: \"%s\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } }"
                  " attr { key: \"shape\" value { shape { dim { size: -1 } dim { size: 300 } } } } }\n", *nm);
  tg_node(&b, "d", "Sub", "x,z", "");
  tg_node(&b, "th", "Tanh", "d", "");
  tg_node(&b, "y", "Mul", "th,x", "");
  pt_case t;
  pt_optimize(&t, b.s, "ewfuse", "y", "x,z", NULL);
  attr_ops(t.after, "y", "Sub,Tanh,Mul");
  const int64_t zrows[3] = {4, 1, 3};
  for (int k = 0; k < 3; k++) {
    dfx_tensor *v[2] = {tg_tensor(&b, 2, X_DIMS, -3, 3), tg_tensor(&b, 2, (int64_t[]){zrows[k], 300}, -3, 3)};
    if (k < 2) {
      tg_same(t.before, t.after, "x,z", v, "y", 0);
    } else {
      dfx_tensor *o1[2] = {0}, *o2[2] = {0};
      cr_assert_eq(tg_run(t.before, "x,z", v, "y", o1), DFX_EINVAL);
      cr_assert_eq(tg_run(t.after, "x,z", v, "y", o2), DFX_EINVAL);
    }
    dfx_tensor_free(v[0]);
    dfx_tensor_free(v[1]);
  }
  pt_free(&t);
  tg_free(&b);
}

/* The tree's input comes from a MatMul nobody else holds: the kernel
 * writes its output over it (in place), also when the last step reads it
 * (Sigmoid(mm) * mm). */
Test(ewfuse, writing_over_a_unique_input) {
  for (int v = 0; v < 2; v++) {
    tg b = {0};
    b.seed = 13;
    tg_printf(&b, "node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_FLOAT } }"
                  " attr { key: \"shape\" value { shape { dim { size: 4 } dim { size: 3 } } } } }\n");
    tg_const(&b, "w", 2, (int64_t[]){3, 300}, -1, 1, NULL, NULL);
    tg_const(&b, "a", 0, NULL, 0.5f, 1.5f, NULL, NULL);
    tg_const(&b, "bb", 2, X_DIMS, -1, 1, NULL, NULL);
    tg_node(&b, "mm", "MatMul", "x,w", "");
    if (v == 0) {
      tg_node(&b, "m", "Mul", "mm,a", "");
      tg_node(&b, "s", "Add", "m,bb", "");
      tg_node(&b, "y", "Tanh", "s", "");
    } else {
      tg_node(&b, "sg", "Sigmoid", "mm", "");
      tg_node(&b, "y", "Mul", "sg,mm", "");
    }
    pt_case t;
    pt_optimize(&t, b.s, "ewfuse", "y", "x", NULL);
    cr_assert_str_eq(pt_op(t.after, "y"), "_FusedElementwise");
    dfx_tensor *x = tg_tensor(&b, 2, (int64_t[]){4, 3}, -2, 2);
    tg_same(t.before, t.after, "x", &x, "y", 0);
    dfx_tensor_free(x);
    pt_free(&t);
    tg_free(&b);
  }
}

/* 3000 elementwise nodes in a row become one node (the pass walks the
 * tree without recursion, the kernel in two block buffers). */
Test(ewfuse, a_very_long_chain) {
  tg b = {0};
  placeholder(&b, "x", "DT_FLOAT", 2);
  const char *ops[3] = {"Sigmoid", "Neg", "Relu6"};
  tg_node(&b, "n0", "Tanh", "x", "");
  for (int k = 1; k < 3000; k++) {
    char name[16], in[16];
    snprintf(name, sizeof name, "n%d", k);
    snprintf(in, sizeof in, "n%d", k - 1);
    tg_node(&b, name, ops[k % 3], in, "");
  }
  pt_case t;
  pt_optimize(&t, b.s, "ewfuse", "n2999", "x", NULL);
  cr_assert_eq(pt_count(t.after), 2);
  cr_assert_str_eq(pt_op(t.after, "n2999"), "_FusedElementwise");
  same(&t, &b, "n2999");
  pt_free(&t);
  tg_free(&b);
}
