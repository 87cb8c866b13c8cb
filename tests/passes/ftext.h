/* ftext.h - GraphDef text for TensorFlow 2 graphs in tests: function
 * library entries (signature, body nodes in the function-body input syntax,
 * ret maps) and the functional ops that call them. Builds on gtext.h. */
#ifndef FTEXT_H
#define FTEXT_H

#include "gtext.h"

#define FT_I32 "DT_INT32"
#define FT_F32 "DT_FLOAT"
#define FT_ARG(n, t) " input_arg { name: \"" n "\" type: " t " }"
#define FT_OUT(n, t) " output_arg { name: \"" n "\" type: " t " }"
/* One FunctionDef; a graph's FT_FUNCs go inside one FT_LIBRARY. */
#define FT_FUNC(name, args, body, rets) " function { signature { name: \"" name "\"" args " }" body rets " }\n"
#define FT_LIBRARY(fns) "library {\n" fns "}\n"
#define FT_RET(k, v) " ret { key: \"" k "\" value: \"" v "\" }"
/* Body nodes: inputs written with GT_INPUT, attrs with GT_TYPE / FT_ATTR_*. */
#define FT_NODE(name, op, inputs, attrs) " node_def { name: \"" name "\" op: \"" op "\"" inputs attrs " }\n"
#define FT_BIN(name, op, a, b, t) FT_NODE(name, op, GT_INPUT(a) GT_INPUT(b), GT_TYPE("T", t))
#define FT_CONST_I32(name, v)                                            \
  FT_NODE(name, "Const", "", GT_TYPE("dtype", "DT_INT32")                \
          " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: " #v " } } }")
#define FT_ATTR_FUNC(k, f) " attr { key: \"" k "\" value { func { name: \"" f "\" } } }"
#define FT_ATTR_TYPES(k, ts) " attr { key: \"" k "\" value { list { " ts " } } }"
#define FT_T(t) "type: " t " "
/* A StatelessWhile / StatelessIf / Case node (graph or body: `node` or `node_def`). */
#define FT_WHILE_ATTRS(types, cond, body) FT_ATTR_TYPES("T", types) FT_ATTR_FUNC("cond", cond) FT_ATTR_FUNC("body", body)
#define FT_IF_ATTRS(tin, tout, then_f, else_f)                                                                \
  GT_TYPE("Tcond", "DT_BOOL") FT_ATTR_TYPES("Tin", tin) FT_ATTR_TYPES("Tout", tout) FT_ATTR_FUNC("then_branch", then_f) \
  FT_ATTR_FUNC("else_branch", else_f)

#endif
