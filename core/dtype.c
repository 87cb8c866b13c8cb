/* dtype.c - the dtype trait table generated from DFX_DTYPE_MAP. */
#include "dtype.h"

#include <string.h>

typedef struct {
  const char *np_name; /* numpy spelling */
  const char *tf_name; /* DT_ spelling */
  size_t size;         /* element bytes (0: not a plain element) */
} dtype_traits;

static const dtype_traits traits[DFX_DTYPE_END_] = {
    [DFX_F32] = {"float32", "DT_FLOAT", 4},       [DFX_F64] = {"float64", "DT_DOUBLE", 8},
    [DFX_I32] = {"int32", "DT_INT32", 4},         [DFX_U8] = {"uint8", "DT_UINT8", 1},
    [DFX_I16] = {"int16", "DT_INT16", 2},         [DFX_I8] = {"int8", "DT_INT8", 1},
    [DFX_STRING] = {"string", "DT_STRING", 0},    [DFX_C64] = {"complex64", "DT_COMPLEX64", 8},
    [DFX_I64] = {"int64", "DT_INT64", 8},         [DFX_BOOL] = {"bool", "DT_BOOL", 1},
    [DFX_QI8] = {"qint8", "DT_QINT8", 1},         [DFX_QU8] = {"quint8", "DT_QUINT8", 1},
    [DFX_QI32] = {"qint32", "DT_QINT32", 4},      [DFX_BF16] = {"bfloat16", "DT_BFLOAT16", 2},
    [DFX_QI16] = {"qint16", "DT_QINT16", 2},      [DFX_QU16] = {"quint16", "DT_QUINT16", 2},
    [DFX_U16] = {"uint16", "DT_UINT16", 2},       [DFX_C128] = {"complex128", "DT_COMPLEX128", 16},
    [DFX_F16] = {"float16", "DT_HALF", 2},        [DFX_RESOURCE] = {"resource", "DT_RESOURCE", 0},
    [DFX_VARIANT] = {"variant", "DT_VARIANT", 0}, [DFX_U32] = {"uint32", "DT_UINT32", 4},
    [DFX_U64] = {"uint64", "DT_UINT64", 8},
};

/* Every map entry must have a row. */
#define XX(name, num, npname, size) +1
_Static_assert(0 DFX_DTYPE_MAP(XX) == 23, "dtype map and trait table disagree");
#undef XX

bool dfx__dtype_valid(int t) { return t > 0 && t < DFX_DTYPE_END_ && traits[t].np_name; }

size_t dfx_dtype_size(dfx_dtype t) { return dfx__dtype_valid(t) ? traits[t].size : 0; }

size_t dfx__dtype_storage(dfx_dtype t) {
  if ((unsigned)t >= DFX_DTYPE_END_) return 0;
  return t == DFX_STRING ? sizeof(dfx_str) : traits[t].size; /* rows missing from the table have size 0 */
}

const char *dfx_dtype_name(dfx_dtype t) { return dfx__dtype_valid(t) ? traits[t].np_name : "invalid"; }

const char *dfx__dtype_tf_name(dfx_dtype t) {
  return dfx__dtype_valid(t) ? traits[t].tf_name : "DT_INVALID";
}

dfx_dtype dfx_dtype_from_name(const char *name) {
  if (!name) return DFX_INVALID;
  for (int t = 1; t < DFX_DTYPE_END_; t++)
    if (traits[t].np_name && strcmp(traits[t].np_name, name) == 0) return (dfx_dtype)t;
  return DFX_INVALID;
}

dfx_dtype dfx__dtype_parse(const char *s) {
  if (!s) return DFX_INVALID;
  /* Upper case is TF's enum spelling, with or without "DT_"; lower case is
   * numpy's or an op signature's. One comparison per row keeps parsing the
   * ~20000 dtype words of the op tables cheap. */
  bool upper = *s >= 'A' && *s <= 'Z';
  const char *key = upper && strncmp(s, "DT_", 3) == 0 ? s + 3 : s;
  for (int t = 1; t < DFX_DTYPE_END_; t++) {
    if (traits[t].np_name && strcmp(upper ? traits[t].tf_name + 3 : traits[t].np_name, key) == 0)
      return (dfx_dtype)t;
  }
  /* TF's short spellings used in op signatures. */
  static const struct {
    const char *n;
    dfx_dtype t;
  } alias[] = {{"float", DFX_F32}, {"double", DFX_F64}, {"half", DFX_F16}, {"complex", DFX_C64}};
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
    if (strcmp(alias[i].n, s) == 0) return alias[i].t;
  return DFX_INVALID;
}

bool dfx__dtype_is_float(dfx_dtype t) {
  return t == DFX_F32 || t == DFX_F64 || t == DFX_F16 || t == DFX_BF16;
}

bool dfx__dtype_is_signed(dfx_dtype t) {
  return t == DFX_I8 || t == DFX_I16 || t == DFX_I32 || t == DFX_I64;
}

bool dfx__dtype_is_int(dfx_dtype t) {
  return dfx__dtype_is_signed(t) || t == DFX_U8 || t == DFX_U16 || t == DFX_U32 || t == DFX_U64;
}

bool dfx__dtype_is_complex(dfx_dtype t) { return t == DFX_C64 || t == DFX_C128; }
