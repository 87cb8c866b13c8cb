/* test_node.c - the node record's lookups (core/node.c): the control-flow
 * class of every control op, its Ref variant and _SwitchN, and of ops that
 * only look like one (RefSelect, RefIdentity); and the typed attr getters,
 * which return the value, or the default when the attr is absent or of
 * another kind. */
#include <criterion/criterion.h>
#include <string.h>

#include "../eutil.h"
#include "alloc.h"
#include "node.h"

TestSuite(node, .init = eu_setup, .fini = eu_teardown);

/* ---- control-flow classes (tf-semantics §2.1, §2.7) ---- */

static const struct {
  const char *op;
  dfx_ctrl_op want;
} ctrl_cases[] = {
    {"Switch", DFX_CTRL_SWITCH},
    {"RefSwitch", DFX_CTRL_SWITCH},
    {"_SwitchN", DFX_CTRL_SWITCH},
    {"Merge", DFX_CTRL_MERGE},
    {"RefMerge", DFX_CTRL_MERGE},
    {"Enter", DFX_CTRL_ENTER},
    {"RefEnter", DFX_CTRL_ENTER},
    {"Exit", DFX_CTRL_EXIT},
    {"RefExit", DFX_CTRL_EXIT},
    {"NextIteration", DFX_CTRL_NEXT_ITERATION},
    {"RefNextIteration", DFX_CTRL_NEXT_ITERATION},
    {"LoopCond", DFX_CTRL_LOOP_COND},
    {"ControlTrigger", DFX_CTRL_CONTROL_TRIGGER},
    /* Not control flow, whatever their names suggest. */
    {"RefSelect", DFX_CTRL_NONE},
    {"Select", DFX_CTRL_NONE},
    {"RefIdentity", DFX_CTRL_NONE},
    {"Identity", DFX_CTRL_NONE},
    {"NoOp", DFX_CTRL_NONE},
    {"Add", DFX_CTRL_NONE},
    {"Const", DFX_CTRL_NONE},
    {"StatelessIf", DFX_CTRL_NONE},
    {"While", DFX_CTRL_NONE},
    {"SwitchN", DFX_CTRL_NONE},      /* only the underscored internal op */
    {"switch", DFX_CTRL_NONE},       /* op names are case-sensitive */
    {"MergeSummary", DFX_CTRL_NONE}, /* a prefix is not a match */
    {"Enter2", DFX_CTRL_NONE},
    {"_Exit", DFX_CTRL_NONE},
    {"Ref", DFX_CTRL_NONE},
    {"", DFX_CTRL_NONE},
};

Test(node, ctrl_class_of_every_control_op_and_look_alikes) {
  for (size_t i = 0; i < sizeof ctrl_cases / sizeof ctrl_cases[0]; i++)
    cr_expect_eq(dfx__ctrl_class(ctrl_cases[i].op), ctrl_cases[i].want, "op '%s'", ctrl_cases[i].op);
}

Test(node, ctrl_map_names_are_the_tf_op_names) {
  /* Every class but NONE is named by the op it comes from. */
  int n = 0;
#define XX(name, str)                                                             \
  if (DFX_CTRL_##name != DFX_CTRL_NONE) {                                         \
    cr_expect_eq(dfx__ctrl_class(str), DFX_CTRL_##name, "%s", str);               \
    n++;                                                                          \
  }
  DFX_CTRL_OP_MAP(XX)
#undef XX
  cr_expect_eq(n, DFX_CTRL_COUNT_ - 1);
  cr_expect_eq(DFX_CTRL_NONE, 0, "a zeroed node record is not a control op");
}

/* ---- attr getters ---- */

static dfx_attr *add(dfx_node *n, const char *name, dfx_attr_kind kind) {
  n->attrs = dfx__realloc(n->attrs, sizeof *n->attrs * (size_t)(n->n_attrs + 1));
  cr_assert_not_null(n->attrs);
  dfx_attr *a = &n->attrs[n->n_attrs++];
  memset(a, 0, sizeof *a);
  a->name = dfx__strdup(name);
  a->kind = kind;
  return a;
}

static void node_clear(dfx_node *n) {
  for (int i = 0; i < n->n_attrs; i++) dfx__attr_clear(&n->attrs[i]);
  dfx__free(n->attrs);
  memset(n, 0, sizeof *n);
}

/* One attr of each kind, with names that share prefixes. */
static void build(dfx_node *n) {
  memset(n, 0, sizeof *n);
  add(n, "T", DFX_ATTR_TYPE)->v.type = DFX_F64;
  add(n, "Tidx", DFX_ATTR_TYPE)->v.type = DFX_I64;
  add(n, "axis", DFX_ATTR_I)->v.i = -(INT64_C(1) << 35);
  add(n, "alpha", DFX_ATTR_F)->v.f = 0.125f;
  add(n, "transpose_a", DFX_ATTR_B)->v.b = true;
  add(n, "transpose_b", DFX_ATTR_B)->v.b = false;
  dfx_attr *s = add(n, "frame_name", DFX_ATTR_S);
  s->v.s = (dfx_str){dfx__strdup("while/ctx"), 9};
  add(n, "empty_s", DFX_ATTR_S)->v.s = (dfx_str){NULL, 0};
  dfx_attr *sh = add(n, "shape", DFX_ATTR_SHAPE);
  sh->v.shape.rank = 2;
  sh->v.shape.dims = dfx__malloc(2 * sizeof(int64_t));
  sh->v.shape.dims[0] = -1, sh->v.shape.dims[1] = 3;
  dfx_attr *t = add(n, "value", DFX_ATTR_TENSOR);
  int32_t seven = 7;
  t->v.tensor = dfx__tensor_scalar(DFX_I32, &seven);
  dfx_attr *l = add(n, "strides", DFX_ATTR_LIST);
  l->v.list.kind = DFX_ATTR_I;
  l->v.list.n = 2;
  l->v.list.v.i = dfx__malloc(2 * sizeof(int64_t));
  l->v.list.v.i[0] = 1, l->v.list.v.i[1] = 2;
  add(n, "dtypes", DFX_ATTR_LIST); /* an empty list: kind NONE, n 0 */
}

Test(node, getters_return_the_value_of_the_matching_kind) {
  dfx_node n;
  build(&n);
  cr_expect_eq(dfx__attr_type(&n, "T", DFX_INVALID), DFX_F64);
  cr_expect_eq(dfx__attr_type(&n, "Tidx", DFX_INVALID), DFX_I64, "names match exactly, not by prefix");
  cr_expect_eq(dfx__attr_int(&n, "axis", 0), -(INT64_C(1) << 35), "the full 64-bit value");
  cr_expect_eq(dfx__attr_float(&n, "alpha", 0), 0.125f);
  cr_expect_eq(dfx__attr_bool(&n, "transpose_a", false), true);
  cr_expect_eq(dfx__attr_bool(&n, "transpose_b", true), false, "a present false beats a default of true");
  cr_expect_str_eq(dfx__attr_str(&n, "frame_name", "def"), "while/ctx");
  cr_expect_str_eq(dfx__attr_str(&n, "empty_s", "def"), "", "an empty string is a value, not absence");
  const dfx_shape *sh = dfx__attr_shape(&n, "shape");
  cr_assert_not_null(sh);
  cr_expect_eq(sh->rank, 2);
  cr_expect_eq(sh->dims[0], -1);
  cr_expect_eq(sh->dims[1], 3);
  const dfx_tensor *t = dfx__attr_tensor(&n, "value");
  cr_assert_not_null(t);
  cr_expect_eq(*(const int32_t *)t->data, 7);
  const dfx_attr_list *l = dfx__attr_list(&n, "strides");
  cr_assert_not_null(l);
  cr_expect_eq(l->n, 2);
  cr_expect_eq(l->v.i[1], 2);
  const dfx_attr_list *e = dfx__attr_list(&n, "dtypes");
  cr_assert_not_null(e, "an empty list is present");
  cr_expect_eq(e->n, 0);
  const dfx_attr *a = dfx__node_attr(&n, "alpha");
  cr_assert_not_null(a);
  cr_expect_str_eq(a->name, "alpha");
  cr_expect_eq(a->kind, DFX_ATTR_F);
  node_clear(&n);
}

Test(node, getters_fall_back_to_the_default_when_absent) {
  dfx_node n;
  build(&n);
  const char *missing[] = {"", "t", "Ti", "Tidx2", "axis ", "nope"};
  for (size_t i = 0; i < sizeof missing / sizeof missing[0]; i++) {
    const char *m = missing[i];
    cr_expect_null(dfx__node_attr(&n, m), "'%s'", m);
    cr_expect_eq(dfx__attr_int(&n, m, 17), 17);
    cr_expect_eq(dfx__attr_float(&n, m, -0.5f), -0.5f);
    cr_expect_eq(dfx__attr_bool(&n, m, true), true);
    cr_expect_eq(dfx__attr_bool(&n, m, false), false);
    cr_expect_eq(dfx__attr_type(&n, m, DFX_U16), DFX_U16);
    cr_expect_str_eq(dfx__attr_str(&n, m, "dflt"), "dflt");
    cr_expect_null(dfx__attr_str(&n, m, NULL), "a NULL default comes back as NULL");
    cr_expect_null(dfx__attr_shape(&n, m));
    cr_expect_null(dfx__attr_tensor(&n, m));
    cr_expect_null(dfx__attr_list(&n, m));
  }
  /* A node with no attrs at all. */
  dfx_node bare = {0};
  cr_expect_eq(dfx__attr_int(&bare, "N", 2), 2);
  cr_expect_null(dfx__node_attr(&bare, "N"));
  node_clear(&n);
}

Test(node, getters_fall_back_to_the_default_on_another_kind) {
  dfx_node n;
  build(&n);
  /* Each getter asked for an attr that exists with a different kind. */
  cr_expect_eq(dfx__attr_int(&n, "alpha", 5), 5, "float is not int");
  cr_expect_eq(dfx__attr_int(&n, "transpose_a", 5), 5, "bool is not int");
  cr_expect_eq(dfx__attr_int(&n, "T", 5), 5, "type is not int");
  cr_expect_eq(dfx__attr_float(&n, "axis", 1.5f), 1.5f, "int is not float");
  cr_expect_eq(dfx__attr_bool(&n, "axis", false), false, "int is not bool");
  cr_expect_eq(dfx__attr_type(&n, "axis", DFX_BOOL), DFX_BOOL, "int is not type");
  cr_expect_str_eq(dfx__attr_str(&n, "T", "d"), "d", "type is not string");
  cr_expect_null(dfx__attr_shape(&n, "value"), "tensor is not shape");
  cr_expect_null(dfx__attr_tensor(&n, "shape"), "shape is not tensor");
  cr_expect_null(dfx__attr_list(&n, "axis"), "int is not list");
  cr_expect_eq(dfx__attr_int(&n, "strides", 3), 3, "list(int) is not int");
  node_clear(&n);
}
