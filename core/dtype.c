/* dtype.c - the dtype trait table, generated from DFX_DTYPE_MAP (dfexec.h). */
#include "dtype.h"

#include <string.h>

typedef struct {
  const char *np_name; /* numpy spelling */
  const char *tf_name; /* DT_ spelling */
  size_t size;         /* element bytes (0: not a plain element) */
} dtype_traits;

static const dtype_traits traits[DFX_DTYPE_END_] = {
#define XX(name, num, np_name, tf_name, size) [DFX_##name] = {np_name, tf_name, size},
    DFX_DTYPE_MAP(XX)
#undef XX
};

/* Every dtype number must fit the table (DFX_DTYPE_END_ is written by hand
 * in the header, since an enum cannot compute a maximum). */
#define XX(name, num, np_name, tf_name, size) _Static_assert((num) > 0 && (num) < DFX_DTYPE_END_, #name " is out of range");
DFX_DTYPE_MAP(XX)
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
