/* test_export.c - graph export (graph/export.c): a graph written back as a
 * GraphDef imports to the same graph (names, ops, devices, inputs, attrs
 * with their kinds and values), runs to the same outputs, and exporting it
 * again gives the same bytes. Also every attr kind, versions and the
 * function library, and a round trip of every conformance graph when the
 * corpus is present. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../eutil.h"
#include "../gtext.h"
#include "graph.h"
#include "graph_import.h"
#include "tensor.h"

TestSuite(export, .init = eu_setup, .fini = eu_teardown, .timeout = 300);

static bool attr_equal(const dfx_attr *a, const dfx_attr *b);

static bool tensor_equal(const dfx_tensor *a, const dfx_tensor *b) {
  if (a->dtype != b->dtype || a->ndims != b->ndims || a->count != b->count) return false;
  for (int i = 0; i < a->ndims; i++)
    if (a->dims[i] != b->dims[i]) return false;
  if (a->dtype != DFX_STRING) return a->nbytes == b->nbytes && memcmp(a->data, b->data, a->nbytes) == 0;
  for (int64_t i = 0; i < a->count; i++) {
    const dfx_str *x = &((const dfx_str *)a->data)[i], *y = &((const dfx_str *)b->data)[i];
    if (x->len != y->len || (x->len && memcmp(x->ptr, y->ptr, x->len) != 0)) return false;
  }
  return true;
}

static bool shape_equal(const dfx_shape *a, const dfx_shape *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

static bool list_equal(const dfx_attr_list *a, const dfx_attr_list *b) {
  if (a->n != b->n) return false;
  if (a->n == 0) return true; /* an empty list has no element kind */
  if (a->kind != b->kind) return false;
  for (int k = 0; k < a->n; k++) {
    bool same;
    switch (a->kind) {
      case DFX_ATTR_S: same = a->v.s[k].len == b->v.s[k].len && memcmp(a->v.s[k].ptr, b->v.s[k].ptr, a->v.s[k].len) == 0; break;
      case DFX_ATTR_I: same = a->v.i[k] == b->v.i[k]; break;
      case DFX_ATTR_F: same = memcmp(&a->v.f[k], &b->v.f[k], sizeof(float)) == 0; break;
      case DFX_ATTR_B: same = a->v.b[k] == b->v.b[k]; break;
      case DFX_ATTR_TYPE: same = a->v.type[k] == b->v.type[k]; break;
      case DFX_ATTR_SHAPE: same = shape_equal(&a->v.shape[k], &b->v.shape[k]); break;
      case DFX_ATTR_TENSOR: same = tensor_equal(a->v.tensor[k], b->v.tensor[k]); break;
      case DFX_ATTR_FUNC: same = strcmp(a->v.func[k], b->v.func[k]) == 0; break;
      default: same = false;
    }
    if (!same) return false;
  }
  return true;
}

static bool attr_equal(const dfx_attr *a, const dfx_attr *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case DFX_ATTR_S:
    case DFX_ATTR_PLACEHOLDER: return a->v.s.len == b->v.s.len && memcmp(a->v.s.ptr, b->v.s.ptr, a->v.s.len) == 0;
    case DFX_ATTR_I: return a->v.i == b->v.i;
    case DFX_ATTR_F: return memcmp(&a->v.f, &b->v.f, sizeof(float)) == 0; /* bit-exact, NaN included */
    case DFX_ATTR_B: return a->v.b == b->v.b;
    case DFX_ATTR_TYPE: return a->v.type == b->v.type;
    case DFX_ATTR_SHAPE: return shape_equal(&a->v.shape, &b->v.shape);
    case DFX_ATTR_TENSOR: return tensor_equal(a->v.tensor, b->v.tensor);
    case DFX_ATTR_FUNC: return strcmp(a->v.func, b->v.func) == 0;
    case DFX_ATTR_LIST: return list_equal(&a->v.list, &b->v.list);
    default: return true;
  }
}

/* Asserts that two graphs hold the same nodes in the same order. */
static void expect_same_graph(const dfx_graph *a, const dfx_graph *b, const char *what) {
  cr_assert_eq(a->n_nodes, b->n_nodes, "%s: node count", what);
  for (int i = 0; i < a->n_nodes; i++) {
    const dfx_node *x = &a->nodes[i], *y = &b->nodes[i];
    cr_assert_str_eq(x->name, y->name, "%s: node %d", what, i);
    cr_assert_str_eq(x->op, y->op, "%s: node '%s'", what, x->name);
    cr_assert_str_eq(x->device, y->device, "%s: node '%s'", what, x->name);
    cr_assert_eq(x->n_in, y->n_in, "%s: node '%s' data inputs", what, x->name);
    cr_assert_eq(x->n_ctrl, y->n_ctrl, "%s: node '%s' control inputs", what, x->name);
    for (int k = 0; k < x->n_in + x->n_ctrl; k++) {
      cr_assert_eq(x->in[k].node, y->in[k].node, "%s: node '%s' input %d", what, x->name, k);
      cr_assert_eq(x->in[k].slot, y->in[k].slot, "%s: node '%s' input %d", what, x->name, k);
    }
    cr_assert_eq(x->n_attrs, y->n_attrs, "%s: node '%s' attr count", what, x->name);
    for (int k = 0; k < x->n_attrs; k++) {
      const dfx_attr *o = dfx__node_attr(y, x->attrs[k].name);
      cr_assert(o, "%s: node '%s' lost attr '%s'", what, x->name, x->attrs[k].name);
      cr_assert(attr_equal(&x->attrs[k], o), "%s: node '%s' attr '%s' changed", what, x->name, x->attrs[k].name);
    }
    cr_assert_eq(x->frame, y->frame, "%s: node '%s' frame", what, x->name);
  }
}

/* Exports g (text or binary), imports the result, checks it is the same
 * graph and that exporting it again gives identical bytes. */
static void round_trip(const dfx_graph *g, int text, const char *what) {
  dfx_status *st = dfx_status_new();
  void *buf = NULL, *buf2 = NULL;
  size_t len = 0, len2 = 0;
  cr_assert_eq(dfx_graph_serialize(g, text, &buf, &len, st), DFX_OK, "%s: %s", what, dfx_status_message(st));
  dfx_graph *h = NULL;
  cr_assert_eq(dfx__graph_import_ex(buf, len, text ? DFX_FORMAT_TEXT : DFX_FORMAT_BINARY,
                                    &h, st),
               DFX_OK, "%s: re-import: %s", what, dfx_status_message(st));
  expect_same_graph(g, h, what);
  cr_assert_eq(dfx_graph_serialize(h, text, &buf2, &len2, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert(len == len2 && memcmp(buf, buf2, len) == 0, "%s: exporting twice differs", what);
  dfx_free(buf);
  dfx_free(buf2);
  dfx_graph_free(h);
  dfx_status_free(st);
}

Test(export, control_flow_graph_round_trips_and_runs_the_same) {
  const char *text = GT_COUNTER_LOOP("w/", 0, 7, 2, 10);
  dfx_graph *g = eu_graph(text);
  round_trip(g, 0, "counter loop, binary");
  round_trip(g, 1, "counter loop, text");
  void *buf;
  size_t len;
  cr_assert_eq(dfx_graph_serialize(g, 0, &buf, &len, NULL), DFX_OK);
  dfx_graph *h = NULL;
  cr_assert_eq(dfx_graph_import(buf, len, &h, NULL), DFX_OK);
  dfx_free(buf);
  dfx_tensor *a[1], *b[1];
  char msg[1024];
  cr_assert_eq(eu_run(g, 1, "w/Exit", a, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(eu_run(h, 2, "w/Exit", b, NULL, NULL, msg, sizeof msg), DFX_OK, "%s", msg);
  cr_assert_eq(eu_i32(a[0]), 8);
  cr_assert_eq(eu_i32(b[0]), eu_i32(a[0]));
  dfx_tensor_free(a[0]);
  dfx_tensor_free(b[0]);
  dfx_graph_free(g);
  dfx_graph_free(h);
}

/* One node carrying every attr kind the importer keeps. The op is unknown
 * (it imports as an opaque node), so no signature touches
 * the attrs. */
static const char every_attr[] =
    "node { name: \"x\" op: \"Made_Up\" device: \"/job:worker/task:1/device:CPU:0\"\n"
    "  attr { key: \"s\" value { s: \"bytes\\000with nul\" } }\n"
    "  attr { key: \"i\" value { i: -9223372036854775807 } }\n"
    "  attr { key: \"f\" value { f: -0.0 } }\n"
    "  attr { key: \"nan\" value { f: nan } }\n"
    "  attr { key: \"b\" value { b: true } }\n"
    "  attr { key: \"t\" value { type: DT_BFLOAT16 } }\n"
    "  attr { key: \"shape\" value { shape { dim { size: -1 } dim { size: 3 } } } }\n"
    "  attr { key: \"scalar_shape\" value { shape { } } }\n"
    "  attr { key: \"unknown_rank\" value { shape { unknown_rank: true } } }\n"
    "  attr { key: \"f32\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1.5 float_val: -2 } } }\n"
    "  attr { key: \"str\" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 2 } } string_val: \"a\" string_val: \"\" } } }\n"
    "  attr { key: \"u16\" value { tensor { dtype: DT_UINT16 tensor_shape { dim { size: 3 } } int_val: 7 } } }\n"
    "  attr { key: \"empty\" value { list { } } }\n"
    "  attr { key: \"ints\" value { list { i: 1 i: -2 i: 3 } } }\n"
    "  attr { key: \"floats\" value { list { f: 0.5 f: 1e30 } } }\n"
    "  attr { key: \"bools\" value { list { b: true b: false } } }\n"
    "  attr { key: \"types\" value { list { type: DT_INT32 type: DT_STRING } } }\n"
    "  attr { key: \"strings\" value { list { s: \"x\" s: \"\" } } }\n"
    "  attr { key: \"shapes\" value { list { shape { dim { size: 2 } } shape { unknown_rank: true } } } }\n"
    "  attr { key: \"tensors\" value { list { tensor { dtype: DT_INT64 tensor_shape { } int64_val: 5 } } } }\n"
    "  attr { key: \"fn\" value { func { name: \"body_fn\" } } }\n"
    "  attr { key: \"fns\" value { list { func { name: \"a\" } func { name: \"b\" } } } }\n"
    "}\n"
    "versions { producer: 27 min_consumer: 12 bad_consumers: 3 }\n"
    "library { function { signature { name: \"body_fn\" } } }\n";

Test(export, every_attr_kind_versions_and_library_round_trip) {
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  cr_assert_eq(dfx__graph_import_ex(every_attr, strlen(every_attr), DFX_FORMAT_TEXT, &g,
                                    st),
               DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(g->nodes[0].n_attrs, 22);
  round_trip(g, 0, "every attr, binary");
  round_trip(g, 1, "every attr, text");
  void *buf;
  size_t len;
  cr_assert_eq(dfx_graph_serialize(g, 1, &buf, &len, st), DFX_OK);
  const char *text = buf;
  cr_assert_eq(text[len], 0, "text output is NUL-terminated");
  cr_assert(strstr(text, "producer: 27") && strstr(text, "min_consumer: 12") && strstr(text, "bad_consumers: 3"), "%s",
            text);
  cr_assert(strstr(text, "name: \"body_fn\""), "library kept: %s", text);
  cr_assert(strstr(text, "list {\n      }") || strstr(text, "list {\n}") || strstr(text, "list {"),
            "an empty list stays a list: %s", text);
  /* Attrs come out sorted by key, as TensorFlow prints them. */
  cr_assert_lt(strstr(text, "key: \"b\"") - text, strstr(text, "key: \"bools\"") - text);
  dfx_free(buf);
  dfx_graph_free(g);
  dfx_status_free(st);
}

Test(export, save_picks_the_format_from_the_name_and_reports_io_errors) {
  dfx_graph *g = eu_graph(GT_CONST_I32("a", 3, "") GT_OP1("b", "Identity", "a", "DT_INT32", ""));
  char dir[] = "/tmp/dfx_export_XXXXXX";
  cr_assert(mkdtemp(dir));
  char pb[256], txt[256];
  snprintf(pb, sizeof pb, "%s/g.pb", dir);
  snprintf(txt, sizeof txt, "%s/g.pbtxt", dir);
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_graph_save(g, pb, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_graph_save(g, txt, st), DFX_OK, "%s", dfx_status_message(st));
  FILE *f = fopen(txt, "r");
  char first[64] = "";
  cr_assert(f && fgets(first, sizeof first, f));
  fclose(f);
  cr_assert(strncmp(first, "node {", 6) == 0, "text file starts with '%s'", first);
  dfx_graph *h = NULL;
  cr_assert_eq(dfx_graph_load(pb, &h, st), DFX_OK, "%s", dfx_status_message(st));
  expect_same_graph(g, h, "saved .pb");
  dfx_graph_free(h);
  cr_assert_eq(dfx_graph_save(g, "/nonexistent-dir/x.pb", st), DFX_EIO);
  cr_assert(strstr(dfx_status_message(st), "/nonexistent-dir/x.pb"), "%s", dfx_status_message(st));
  cr_assert_eq(dfx_graph_serialize(NULL, 0, NULL, NULL, st), DFX_EINVAL);
  remove(pb);
  remove(txt);
  remove(dir);
  dfx_status_free(st);
  dfx_graph_free(g);
}

/* Every graph of the corpus, when it is there (tests/meson.build passes
 * its location; an absent corpus skips this test visibly). Cases sit in
 * nested folders, each with a frozen_model.pb. */
static int n_round_tripped;

static int visit(const char *path, const struct stat *sb, int type, struct FTW *ftw) {
  (void)sb;
  (void)ftw;
  size_t n = strlen(path);
  if (type != FTW_F || n < 16 || strcmp(path + n - 16, "/frozen_model.pb") != 0) return 0;
  dfx_graph *g = NULL;
  if (dfx_graph_load(path, &g, NULL) != DFX_OK) return 0; /* import failures are the conformance suite's business */
  round_trip(g, 0, path);
  dfx_graph_free(g);
  n_round_tripped++;
  return 0;
}

Test(export, every_conformance_graph_round_trips) {
  const char *dir = getenv("DFX_CONFORMANCE_DIR");
  if (!dir || !*dir) cr_skip_test("DFX_CONFORMANCE_DIR is not set: no corpus to round-trip");
  char root[4096];
  snprintf(root, sizeof root, "%s/tf1", dir);
  struct stat sb;
  if (stat(root, &sb) != 0) cr_skip_test("no corpus at %s", root);
  n_round_tripped = 0;
  cr_assert_eq(nftw(root, visit, 16, FTW_PHYS), 0);
  cr_assert_gt(n_round_tripped, 1100, "only %d corpus graphs imported", n_round_tripped);
}
