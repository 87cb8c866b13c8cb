/* gtext_ad.h - node text for gradient-check graphs: "$T" is the float dtype
 * the checker substitutes (gcheck.h). */
#ifndef GTEXT_AD_H
#define GTEXT_AD_H

#define AT(k) " attr { key: \"" k "\" value { type: $T } }"
#define AI(k, v) " attr { key: \"" k "\" value { i: " #v " } }"
#define AB(k, v) " attr { key: \"" k "\" value { b: " #v " } }"
#define AF(k, v) " attr { key: \"" k "\" value { f: " #v " } }"
#define AS(k, v) " attr { key: \"" k "\" value { s: \"" v "\" } }"
#define AIL(k, ...) " attr { key: \"" k "\" value { list { " __VA_ARGS__ " } } }"
#define IN(s) " input: \"" s "\""
/* A node of op with T = $T and the given inputs and extra attrs. */
#define N1(name, op, a) "node { name: \"" name "\" op: \"" op "\"" IN(a) AT("T") " }\n"
#define N2(name, op, a, b) "node { name: \"" name "\" op: \"" op "\"" IN(a) IN(b) AT("T") " }\n"
#define NX(name, op, ins, attrs) "node { name: \"" name "\" op: \"" op "\"" ins AT("T") attrs " }\n"
/* int32 constant vector / scalar, float scalar. */
#define CIV(name, n, vals) \
  "node { name: \"" name "\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } }" \
  " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: " #n " } } " vals " } } } }\n"
#define CIS(name, v) \
  "node { name: \"" name "\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } }" \
  " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: " #v " } } } }\n"
#define CIM(name, r, c, vals) \
  "node { name: \"" name "\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } }" \
  " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: " #r " } dim { size: " #c " } } " vals " } } } }\n"
#define IV(x) "int_val: " #x " "

#define S0 0, {0}
#define S1(a) 1, {a}
#define S2(a, b) 2, {a, b}
#define S3(a, b, c) 3, {a, b, c}
#define S4(a, b, c, d) 4, {a, b, c, d}

#endif
