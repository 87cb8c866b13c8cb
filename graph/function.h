/* function.h - a GraphDef's function library (FunctionDefLibrary) in
 * dfexec's own form, for the passes that inline calls and lower functional
 * control flow (passes/lower*.c). Each FunctionDef keeps its signature as a
 * dfx_op_def, its body nodes as dfx_node records (name, op, device, attrs;
 * attr placeholders such as `$T` stay DFX_ATTR_PLACEHOLDER) with their input
 * strings as written (the function-body syntax "arg", "arg:k", "node:out:k",
 * "^node"), and its ret / control_ret maps. Nothing here resolves a body:
 * that needs the op registry and the caller's attrs, which is the inliner's
 * job. */
#ifndef DFX_FUNCTION_H
#define DFX_FUNCTION_H

#include <stdbool.h>

#include "graph.h"
#include "node.h"
#include "op_def.h"

typedef struct dfx_fn_node {
  dfx_node node;        /* name, op, device and attrs (in, edges unused) */
  int n_inputs;
  char **inputs;        /* as written in the FunctionDef */
} dfx_fn_node;

typedef struct dfx_function {
  dfx_op_def sig;       /* name, in and out args; attrs carry names only */
  int n_nodes;
  dfx_fn_node *nodes;
  char **ret;           /* per output arg (sig.out order): the body port it returns, or NULL */
  int n_control_ret;
  char **control_ret;   /* body node names whose completion is a control output */
  int n_attrs;
  dfx_attr *attrs;      /* the function's own attrs (_noinline, _input_shapes, ...) */
} dfx_function;

typedef struct dfx_fn_lib {
  int n;
  dfx_function *fns;    /* sorted by name */
} dfx_fn_lib;

/* The library of g (g->meta.library) converted; *out is new (free with
 * dfx__fn_lib_free), and empty when g has none. DFX_ENOMEM, or DFX_EINVAL
 * naming the function and node for a malformed entry. */
dfx_code dfx__fn_lib_from_graph(const dfx_graph *g, dfx_fn_lib **out, dfx_status *st);
void dfx__fn_lib_free(dfx_fn_lib *lib);
/* The function called `name` (borrowed), or NULL. */
const dfx_function *dfx__fn_lib_find(const dfx_fn_lib *lib, const char *name);
/* The function's attr `name` (borrowed), or NULL. */
const dfx_attr *dfx__function_attr(const dfx_function *f, const char *name);
/* Whether g has a function library with at least one function. */
bool dfx__graph_has_functions(const dfx_graph *g);
/* When op names a function of g's library (a direct call): its output
 * count (list outputs count one), with the fixed dtypes of the first cap
 * outputs in types (DFX_INVALID where an attr decides); -1 otherwise. */
int dfx__graph_function_outputs(const dfx_graph *g, const char *op, dfx_dtype *types, int cap);
/* Drops g's function library (after everything calling it was inlined). */
void dfx__graph_drop_library(dfx_graph *g);

#endif
