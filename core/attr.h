/* attr.h - node attributes in dfexec's own form (no protobuf types).
 * The importer converts every AttrValue into a dfx_attr; kernels read them
 * through the typed getters below, normally once at session creation. */
#ifndef DFX_ATTR_H
#define DFX_ATTR_H

#include <stdbool.h>
#include <stdint.h>

#include "dfexec.h"
#include "tensor.h"

typedef enum dfx_attr_kind {
  DFX_ATTR_NONE = 0,
  DFX_ATTR_S,
  DFX_ATTR_I,
  DFX_ATTR_F,
  DFX_ATTR_B,
  DFX_ATTR_TYPE,
  DFX_ATTR_SHAPE,
  DFX_ATTR_TENSOR,
  DFX_ATTR_FUNC,
  DFX_ATTR_PLACEHOLDER,
  DFX_ATTR_LIST /* `list.kind` says the element kind; an empty list has kind NONE */
} dfx_attr_kind;

/* A shape attr: rank -1 means unknown rank; a dim of -1 is unknown. */
typedef struct dfx_shape {
  int rank;
  int64_t *dims;
} dfx_shape;

typedef struct dfx_attr_list {
  dfx_attr_kind kind;
  int n;
  union {
    dfx_str *s;
    int64_t *i;
    float *f;
    bool *b;
    dfx_dtype *type;
    dfx_shape *shape;
    dfx_tensor **tensor;
    char **func;
  } v;
} dfx_attr_list;

typedef struct dfx_attr {
  char *name;
  dfx_attr_kind kind;
  /* The GraphDef gave a reference dtype (DT_FLOAT_REF = 101 ...): the value
   * holds the base type, and this flag lets validation reject it as TF does
   * (a type or list(type) attr never holds a ref type). */
  bool ref_dtype;
  union {
    dfx_str s;
    int64_t i;
    float f;
    bool b;
    dfx_dtype type;
    dfx_shape shape;
    dfx_tensor *tensor;
    char *func; /* NameAttrList name (its attrs are not kept) */
    dfx_attr_list list;
  } v;
} dfx_attr;

void dfx__attr_clear(dfx_attr *a);
/* TF's spelling of a kind ("string", "int", "float", "bool", "type", "shape",
 * "tensor", "func", "placeholder", "list"; "none" for DFX_ATTR_NONE). */
const char *dfx__attr_kind_name(dfx_attr_kind k);
/* Whether two attr values are equal (names are not compared): floats bit
 * for bit, tensors by dtype, shape and bytes, an empty list equal to any
 * empty list. */
bool dfx__attr_equal(const dfx_attr *a, const dfx_attr *b);
/* Folds a's value into the FNV-1a hash h; equal values hash alike. */
uint64_t dfx__attr_hash(const dfx_attr *a, uint64_t h);
/* Bytes of one element of a dfx_attr_list of kind k (its union member's size). */
size_t dfx__attr_elem_size(dfx_attr_kind k);
/* Deep copy of src into dst; DFX_ENOMEM on failure (dst then cleared). */
dfx_code dfx__attr_copy(dfx_attr *dst, const dfx_attr *src);

#endif
