/* test_types.c - the dtypes the conv family's kernel rows declare: each row
 * constrains every type attr of its op, declares only dtypes TensorFlow
 * allows there, and every allowed dtype it leaves out is refused when a
 * session plans the node, naming the attr and the dtype. (The other tests
 * sweep exactly the declared dtypes against references.) */
#include "ctest.h"
#include "op_registry.h"

/* Every op of the family and its type attrs. */
static const struct {
  const char *op, *attrs[3];
} rows[] = {
    {"Conv2D", {"T"}},
    {"Conv2DBackpropInput", {"T"}},
    {"DepthwiseConv2dNative", {"T"}},
    {"DepthwiseConv2dNativeBackpropInput", {"T"}},
    {"Conv3D", {"T"}},
    {"Conv3DBackpropInputV2", {"T", "Tshape"}},
    {"MaxPool", {"T"}},
    {"MaxPoolV2", {"T"}},
    {"AvgPool", {"T"}},
    {"MaxPool3D", {"T"}},
    {"AvgPool3D", {"T"}},
    {"MaxPoolWithArgmax", {"T", "Targmax"}},
    {"Dilation2D", {"T"}},
    {"SpaceToBatchND", {"T", "Tblock_shape", "Tpaddings"}},
    {"BatchToSpaceND", {"T", "Tblock_shape", "Tcrops"}},
    {"SpaceToBatch", {"T", "Tpaddings"}},
    {"BatchToSpace", {"T", "Tidx"}},
    {"SpaceToDepth", {"T"}},
    {"DepthToSpace", {"T"}},
    {"ExtractImagePatches", {"T"}},
    {"ResizeBilinear", {"T"}},
    {"ResizeNearestNeighbor", {"T"}},
    {"ResizeBicubic", {"T"}},
    {"ResizeArea", {"T"}},
    {"CropAndResize", {"T"}},
    {"AdjustContrastv2", {"T"}},
    {"AdjustHue", {"T"}},
    {"AdjustSaturation", {"T"}},
    {"RGBToHSV", {"T"}},
    {"HSVToRGB", {"T"}},
    {"DrawBoundingBoxes", {"T"}},
    {"DrawBoundingBoxesV2", {"T"}},
    {"NonMaxSuppression", {NULL}},
    {"NonMaxSuppressionV2", {"T", "T_threshold"}},
    {"NonMaxSuppressionV3", {"T", "T_threshold"}},
    {"NonMaxSuppressionV4", {"T", "T_threshold"}},
    {"NonMaxSuppressionV5", {"T"}},
};

/* TF's allowed dtypes for a type attr, as a bit per dtype. */
static uint64_t allowed(const dfx_op_def *d, const char *attr) {
  const dfx_op_attr *a = dfx__op_def_attr(d, attr);
  cr_assert_not_null(a, "%s has no attr %s", d->name, attr);
  uint64_t m = 0;
  for (int t = 1; t < DFX_DTYPE_END_; t++)
    if (dfx__dtype_valid(t) && (!a->allowed || (a->allowed >> t & 1))) m |= (uint64_t)1 << t;
  return m;
}

Test(conv_types, declared_within_tf_and_the_rest_refused) {
  const dfx_registry *reg = ct_registry();
  int refused = 0;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const dfx_op_def *d = dfx__op_get(rows[i].op);
    cr_assert_not_null(d, "%s", rows[i].op);
    cr_assert(dfx__registry_has_kernel(reg, rows[i].op), "%s has no kernel", rows[i].op);
    int n_type_attrs = 0;
    for (int k = 0; k < d->n_attrs; k++) n_type_attrs += d->attrs[k].kind == DFX_ATTR_TYPE;
    int listed = 0;
    for (int k = 0; k < 3 && rows[i].attrs[k]; k++, listed++) {
      const char *attr = rows[i].attrs[k];
      uint64_t decl = dfx__registry_kernel_types(reg, rows[i].op, attr), tf = allowed(d, attr);
      cr_assert(decl != ~(uint64_t)0, "%s: a row leaves %s unconstrained", rows[i].op, attr);
      cr_assert_eq(decl & ~tf, 0, "%s declares %s dtypes TF does not allow", rows[i].op, attr);
      for (int t = 1; t < DFX_DTYPE_END_; t++) {
        if (!(tf >> t & 1) || decl >> t & 1) continue;
        dfx_node *n = kh_node_new(rows[i].op);
        kh_attr_type(n, attr, (dfx_dtype)t);
        dfx_status st;
        dfx__status_clear(&st);
        cr_assert_null(dfx__registry_kernel_for(reg, n, &st), "%s: %s=%s has a kernel", rows[i].op, attr,
                       dfx_dtype_name((dfx_dtype)t));
        char want[64];
        snprintf(want, sizeof want, "%s=%s", attr, dfx_dtype_name((dfx_dtype)t));
        cr_assert(st.code == DFX_EUNIMPL && strstr(st.msg, want), "%s: message '%s' lacks '%s'", rows[i].op, st.msg,
                  want);
        kh_node_free(n);
        refused++;
      }
    }
    cr_assert_eq(listed, n_type_attrs, "%s: the table lists %d of its %d type attrs", rows[i].op, listed,
                 n_type_attrs);
  }
  /* Undeclared but TF-allowed: resource and variant for the copy ops. */
  cr_assert(refused >= 12, "only %d refusals", refused);
}
