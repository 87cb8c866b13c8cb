/* test_node_sig.c - attr validation against an op's def (dfx__node_check_attrs):
 * one test per rejection class with its exact message, valid nodes accepted,
 * and the same checks reached through import, where TF's OpDefs stand in
 * for ops without a kernel-file signature. */
#include <criterion/criterion.h>
#include <string.h>

#include "../eutil.h"
#include "../gtext.h"
#include "alloc.h"
#include "graph.h"
#include "node_sig.h"
#include "status.h"

TestSuite(node_sig, .init = eu_setup, .fini = eu_teardown);

/* ---- nodes built by hand (no import, so any def can be checked) ---- */

static dfx_node *node_new(const char *name, const char *op) {
  dfx_node *n = dfx__calloc(1, sizeof *n);
  n->name = dfx__strdup(name);
  n->op = dfx__strdup(op);
  return n;
}

static void node_free(dfx_node *n) {
  for (int i = 0; i < n->n_attrs; i++) dfx__attr_clear(&n->attrs[i]);
  dfx__free(n->attrs);
  dfx__free(n->name);
  dfx__free(n->op);
  dfx__free(n);
}

static dfx_attr *add(dfx_node *n, const char *name, dfx_attr_kind kind) {
  n->attrs = dfx__realloc(n->attrs, sizeof *n->attrs * (size_t)(n->n_attrs + 1));
  dfx_attr *a = &n->attrs[n->n_attrs++];
  memset(a, 0, sizeof *a);
  a->name = dfx__strdup(name);
  a->kind = kind;
  return a;
}

static void set_int(dfx_node *n, const char *name, int64_t v) { add(n, name, DFX_ATTR_I)->v.i = v; }
static void set_type(dfx_node *n, const char *name, dfx_dtype t) { add(n, name, DFX_ATTR_TYPE)->v.type = t; }
static void set_str(dfx_node *n, const char *name, const char *s) {
  dfx_attr *a = add(n, name, DFX_ATTR_S);
  a->v.s.ptr = dfx__strdup(s);
  a->v.s.len = strlen(s);
}

/* A list attr of `count` elements of `kind` copied from v (an empty list has kind NONE, as import makes it). */
static void set_list(dfx_node *n, const char *name, dfx_attr_kind kind, const void *v, int count) {
  dfx_attr *a = add(n, name, DFX_ATTR_LIST);
  a->v.list.kind = count ? kind : DFX_ATTR_NONE;
  a->v.list.n = count;
  if (!count) return;
  size_t esz = dfx__attr_elem_size(kind);
  a->v.list.v.i = dfx__malloc(esz * (size_t)count);
  memcpy(a->v.list.v.i, v, esz * (size_t)count);
}
#define INTS(n, name, ...) \
  set_list(n, name, DFX_ATTR_I, (int64_t[]){__VA_ARGS__}, sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define TYPES(n, name, ...) \
  set_list(n, name, DFX_ATTR_TYPE, (dfx_dtype[]){__VA_ARGS__}, sizeof((dfx_dtype[]){__VA_ARGS__}) / sizeof(dfx_dtype))

static dfx_op_def *parse(const dfx_op_src *row) {
  dfx_op_def *d = NULL;
  dfx_status st;
  cr_assert(row);
  cr_assert_eq(dfx__op_def_parse(row, &d, &st), DFX_OK, "%s", st.msg);
  return d;
}
static dfx_op_def *tf(const char *op) { return parse(dfx__op_table_tf_find(op)); }

/* Fills defaults, validates against def, frees node and def; the message
 * must equal `want` exactly (NULL: the node must be valid). */
static void check(dfx_node *n, dfx_op_def *def, const char *want) {
  dfx_status st;
  dfx__status_clear(&st);
  cr_assert_eq(dfx__node_fill_defaults(n, def, &st), DFX_OK, "%s", st.msg);
  dfx_code c = dfx__node_check_attrs(n, def, &st);
  node_free(n);
  dfx__op_def_free(def);
  if (!want) {
    cr_assert_eq(c, DFX_OK, "%s", st.msg);
    return;
  }
  cr_assert_eq(c, DFX_EINVAL, "accepted; wanted: %s", want);
  cr_assert_str_eq(st.msg, want);
}

static dfx_node *conv2d(const char *name) {
  dfx_node *n = node_new(name, "Conv2D");
  set_type(n, "T", DFX_F32);
  INTS(n, "strides", 1, 1, 1, 1);
  set_str(n, "padding", "SAME");
  return n;
}

Test(node_sig, rejects_int_below_minimum) {
  dfx_node *n = node_new("p", "Pack");
  set_int(n, "N", 0);
  set_type(n, "T", DFX_F32);
  check(n, tf("Pack"), "Node 'p' (Pack): attr 'N' = 0 is below the minimum 1");
  n = node_new("t", "InitializeTableFromTextFileV2"); /* TF's one negative minimum: -2 */
  set_int(n, "key_index", -3);
  set_int(n, "value_index", -2);
  check(n, tf("InitializeTableFromTextFileV2"),
        "Node 't' (InitializeTableFromTextFileV2): attr 'key_index' = -3 is below the minimum -2");
}

Test(node_sig, rejects_number_attr_below_minimum) {
  dfx_node *n = node_new("ds", "DynamicStitch"); /* indices: N * int32 */
  set_int(n, "N", 0);
  set_type(n, "T", DFX_F32);
  check(n, tf("DynamicStitch"), "Node 'ds' (DynamicStitch): attr 'N' = 0 is below the minimum 1");
}

Test(node_sig, rejects_string_not_allowed) {
  dfx_node *n = conv2d("c");
  set_str(n, "data_format", "XYZW");
  check(n, tf("Conv2D"), "Node 'c' (Conv2D): attr 'data_format' = \"XYZW\" is not one of 'NHWC', 'NCHW'");
}

Test(node_sig, rejects_list_shorter_than_minimum) {
  dfx_node *n = node_new("ap", "AvgPool");
  set_type(n, "T", DFX_F32);
  INTS(n, "ksize", 1, 2);
  INTS(n, "strides", 1, 1, 1, 1);
  set_str(n, "padding", "VALID");
  check(n, tf("AvgPool"), "Node 'ap' (AvgPool): attr 'ksize' has 2 elements, below the minimum length 4");
  n = node_new("d", "DecodeCSV");
  set_list(n, "OUT_TYPE", DFX_ATTR_TYPE, NULL, 0);
  check(n, tf("DecodeCSV"), "Node 'd' (DecodeCSV): attr 'OUT_TYPE' has 0 elements, below the minimum length 1");
}

Test(node_sig, rejects_type_not_allowed) {
  dfx_node *n = node_new("ip", "InvertPermutation");
  set_type(n, "T", DFX_F32);
  check(n, tf("InvertPermutation"), "Node 'ip' (InvertPermutation): attr 'T' = float32 is not one of int32, int64");
  n = node_new("d", "DecodeCSV");
  TYPES(n, "OUT_TYPE", DFX_F32, DFX_BOOL);
  check(n, tf("DecodeCSV"),
        "Node 'd' (DecodeCSV): attr 'OUT_TYPE'[1] = bool is not one of float32, float64, int32, string, int64");
}

Test(node_sig, rejects_list_string_not_allowed) {
  static const dfx_op_src row = {"M", "", "modes: list({'a', 'b'}) >= 1", 0};
  dfx_node *n = node_new("m", "M");
  dfx_str s[2] = {{dfx__strdup("a"), 1}, {dfx__strdup("c"), 1}}; /* the list takes these */
  set_list(n, "modes", DFX_ATTR_S, s, 2);
  check(n, parse(&row), "Node 'm' (M): attr 'modes'[1] = \"c\" is not one of 'a', 'b'");
}

Test(node_sig, rejects_missing_attr_and_wrong_kind) {
  dfx_node *n = node_new("p", "Pack");
  set_int(n, "N", 2);
  check(n, tf("Pack"), "Node 'p' (Pack): missing attr 'T' (type)");
  n = node_new("p", "Pack");
  set_str(n, "N", "2");
  set_type(n, "T", DFX_F32);
  check(n, tf("Pack"), "Node 'p' (Pack): attr 'N' is a string value but the op declares int");
  n = node_new("c", "Conv2D");
  set_type(n, "T", DFX_F32);
  set_list(n, "strides", DFX_ATTR_F, (float[]){1}, 1);
  set_str(n, "padding", "SAME");
  check(n, tf("Conv2D"), "Node 'c' (Conv2D): attr 'strides' is a list(float) value but the op declares list(int)");
}

Test(node_sig, rejects_reference_dtype) {
  dfx_node *n = node_new("i", "Identity");
  set_type(n, "T", DFX_F32);
  n->attrs[0].ref_dtype = true; /* what import records for DT_FLOAT_REF */
  check(n, tf("Identity"), "Node 'i' (Identity): attr 'T' must not have a reference type value");
  n = node_new("n", "IdentityN");
  TYPES(n, "T", DFX_F32, DFX_I32);
  n->attrs[0].ref_dtype = true;
  check(n, tf("IdentityN"), "Node 'n' (IdentityN): attr 'T' must not have a reference type value");
}

Test(node_sig, accepts_valid_nodes_and_fills_defaults) {
  dfx_node *n = conv2d("c");
  set_int(n, "newer_tf_attr", 1); /* not in the OpDef: accepted (see node_sig.c) */
  set_str(n, "_class", "loc:@x");
  dfx_op_def *def = tf("Conv2D");
  dfx_status st;
  cr_assert_eq(dfx__node_fill_defaults(n, def, &st), DFX_OK);
  cr_assert_eq(dfx__node_check_attrs(n, def, &st), DFX_OK, "%s", st.msg);
  cr_assert_str_eq(dfx__attr_str(n, "data_format", ""), "NHWC");
  cr_assert_eq(dfx__attr_list(n, "dilations")->n, 4);
  cr_assert_eq(dfx__attr_list(n, "explicit_paddings")->n, 0);
  node_free(n);
  dfx__op_def_free(def);
  n = node_new("t", "InitializeTableFromTextFileV2"); /* exactly the minimum */
  set_int(n, "key_index", -2);
  set_int(n, "value_index", -1);
  check(n, tf("InitializeTableFromTextFileV2"), NULL);
  n = node_new("d", "DecodeCSV");
  TYPES(n, "OUT_TYPE", DFX_F32, DFX_STRING, DFX_I64);
  check(n, tf("DecodeCSV"), NULL);
}

/* ---- through import: kernel-file signatures first, then TF's OpDefs ---- */

static void import_rejects(const char *text, const char *want) {
  char msg[2048];
  dfx_code c = eu_import(text, msg, sizeof msg);
  cr_assert_eq(c, DFX_EINVAL, "got %s: %s", dfx_code_name(c), msg);
  cr_assert_str_eq(msg, want);
}

Test(node_sig, import_rejects_reference_dtype_in_attr) {
  import_rejects(GT_CONST_F32("a", 1, "") GT_OP1("i", "Identity", "a", "DT_FLOAT_REF", ""),
                 "Node 'i' (Identity): attr 'T' must not have a reference type value");
}

Test(node_sig, import_rejects_attr_without_value) {
  import_rejects(GT_CONST_F32("a", 1, "") "node { name: \"i\" op: \"Identity\" input: \"a\" attr { key: \"T\" value { } } }\n",
                 "Node 'i' (Identity): attr 'T' has no value (the op declares type)");
}

Test(node_sig, import_checks_minimum_of_kernel_file_signature) {
  import_rejects("node { name: \"p\" op: \"Pack\" attr { key: \"N\" value { i: 0 } }" GT_TYPE("T", "DT_FLOAT") " }\n",
                 "Node 'p' (Pack): attr 'N' = 0 is below the minimum 1");
}

/* ApproximateEqual has no kernel-file signature: import knows it from TF's
 * OpDef alone (defaults, output dtype, allowed types). */
Test(node_sig, import_uses_tf_opdef_for_other_ops) {
  const char *ok = GT_CONST_F32("a", 1, "") GT_CONST_F32("b", 2, "") GT_OP2("ae", "ApproximateEqual", "a", "b", "DT_FLOAT", "");
  dfx_graph *g = eu_graph(ok);
  int ae = dfx_graph_node_find(g, "ae");
  cr_assert_geq(ae, 0);
  cr_assert_float_eq(dfx__attr_float(&g->nodes[ae], "tolerance", 0), 1e-5f, 1e-12);
  cr_assert_eq(dfx_graph_node_num_outputs(g, ae), 1);
  cr_assert_eq(dfx_graph_node_output_dtype(g, ae, 0), DFX_BOOL);
  dfx_graph_free(g);
  char msg[2048];
  cr_assert_eq(eu_import(GT_CONST_BOOL("a", 1, "") GT_CONST_BOOL("b", 1, "")
                             GT_OP2("ae", "ApproximateEqual", "a", "b", "DT_BOOL", ""),
                         msg, sizeof msg),
               DFX_EINVAL);
  cr_assert(strstr(msg, "Node 'ae' (ApproximateEqual): attr 'T' = bool is not one of float32, float64"), "%s", msg);
}
