/* function.c - converting a graph's FunctionDefLibrary (kept unpacked in
 * g->meta.library since import) into dfx_function records (function.h).
 * Only this file and graph_import.c read the generated types of the
 * library; what comes out is plain dfexec data the passes can use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "function.h"
#include "graph.pb-c.h"
#include "graph_import.h"
#include "pballoc.h"
#include "tensor_proto.h"

static dfx_code oom(dfx_status *st) { return dfx__status_set(st, DFX_ENOMEM, "out of memory converting the function library"); }

static void args_free(dfx_op_arg *a, int n) {
  for (int i = 0; a && i < n; i++) {
    dfx__free(a[i].name);
    dfx__free(a[i].type_attr);
    dfx__free(a[i].number_attr);
    dfx__free(a[i].type_list_attr);
  }
  dfx__free(a);
}

static void function_clear(dfx_function *f) {
  dfx__free(f->sig.name);
  args_free(f->sig.in, f->sig.n_in);
  for (int i = 0; f->ret && i < f->sig.n_out; i++) dfx__free(f->ret[i]);
  args_free(f->sig.out, f->sig.n_out);
  dfx__free(f->ret);
  for (int i = 0; i < f->n_nodes; i++) {
    dfx__node_clear(&f->nodes[i].node);
    for (int k = 0; k < f->nodes[i].n_inputs; k++) dfx__free(f->nodes[i].inputs[k]);
    dfx__free(f->nodes[i].inputs);
  }
  dfx__free(f->nodes);
  for (int i = 0; i < f->n_control_ret; i++) dfx__free(f->control_ret[i]);
  dfx__free(f->control_ret);
  for (int i = 0; i < f->n_attrs; i++) dfx__attr_clear(&f->attrs[i]);
  dfx__free(f->attrs);
  memset(f, 0, sizeof *f);
}

void dfx__fn_lib_free(dfx_fn_lib *lib) {
  if (!lib) return;
  for (int i = 0; i < lib->n; i++) function_clear(&lib->fns[i]);
  dfx__free(lib->fns);
  dfx__free(lib);
}

static char *dup_or_empty(const char *s) { return dfx__strdup(s ? s : ""); }

static dfx_code convert_args(Tensorflow__OpDef__ArgDef **in, size_t n, dfx_op_arg **out, int *n_out,
                             dfx_status *st) {
  *out = NULL;
  *n_out = 0;
  if (!n) return DFX_OK;
  if (!(*out = dfx__calloc(n, sizeof **out))) return oom(st);
  for (size_t i = 0; i < n; i++, (*n_out)++) {
    dfx_op_arg *a = &(*out)[i];
    a->type = in[i]->type ? dfx__dtype_from_wire(in[i]->type) : DFX_INVALID;
    a->is_ref = in[i]->is_ref;
    if (!(a->name = dup_or_empty(in[i]->name))) return oom(st);
    /* Empty attr names mean "none", as in TF's ArgDef. */
    if (in[i]->type_attr && *in[i]->type_attr && !(a->type_attr = dfx__strdup(in[i]->type_attr))) return oom(st);
    if (in[i]->number_attr && *in[i]->number_attr && !(a->number_attr = dfx__strdup(in[i]->number_attr)))
      return oom(st);
    if (in[i]->type_list_attr && *in[i]->type_list_attr &&
        !(a->type_list_attr = dfx__strdup(in[i]->type_list_attr)))
      return oom(st);
  }
  return DFX_OK;
}

static dfx_code convert_function(const Tensorflow__FunctionDef *fd, dfx_function *f, dfx_status *st) {
  const Tensorflow__OpDef *sig = fd->signature;
  if (!sig || !sig->name || !*sig->name)
    return dfx__status_set(st, DFX_EINVAL, "function library: a FunctionDef has no signature name");
  const char *fname = sig->name;
  dfx_code c;
  if (!(f->sig.name = dfx__strdup(fname))) return oom(st);
  if ((c = convert_args(sig->input_arg, sig->n_input_arg, &f->sig.in, &f->sig.n_in, st)) != DFX_OK) return c;
  if ((c = convert_args(sig->output_arg, sig->n_output_arg, &f->sig.out, &f->sig.n_out, st)) != DFX_OK) return c;
  f->sig.flags = sig->is_stateful ? DFX_OP_STATEFUL : 0;
  if (f->sig.n_out && !(f->ret = dfx__calloc((size_t)f->sig.n_out, sizeof *f->ret))) return oom(st);
  for (size_t i = 0; i < fd->n_ret; i++) {
    const char *key = fd->ret[i]->key ? fd->ret[i]->key : "";
    int k = 0;
    while (k < f->sig.n_out && strcmp(f->sig.out[k].name, key) != 0) k++;
    if (k == f->sig.n_out)
      return dfx__status_set(st, DFX_EINVAL, "function '%s': ret '%s' names no output argument", fname, key);
    dfx__free(f->ret[k]);
    if (!(f->ret[k] = dup_or_empty(fd->ret[i]->value))) return oom(st);
  }
  for (int k = 0; k < f->sig.n_out; k++)
    if (!f->ret[k])
      return dfx__status_set(st, DFX_EINVAL, "function '%s': output '%s' has no ret entry", fname, f->sig.out[k].name);
  if (fd->n_node_def && !(f->nodes = dfx__calloc(fd->n_node_def, sizeof *f->nodes))) return oom(st);
  for (size_t i = 0; i < fd->n_node_def; i++, f->n_nodes++) {
    dfx_fn_node *fn = &f->nodes[i];
    const Tensorflow__NodeDef *nd = fd->node_def[i];
    fn->node.frame = fn->node.child_frame = -1;
    if ((c = dfx__node_from_proto(nd, &fn->node, st)) != DFX_OK) {
      f->n_nodes++;
      char msg[DFX_STATUS_MSG_MAX];
      snprintf(msg, sizeof msg, "%s", st ? st->msg : "");
      return dfx__status_set(st, c, "function '%s': %s", fname, msg);
    }
    if (nd->n_input) {
      if (!(fn->inputs = dfx__calloc(nd->n_input, sizeof(char *)))) {
        f->n_nodes++;
        return oom(st);
      }
      for (size_t k = 0; k < nd->n_input; k++, fn->n_inputs++)
        if (!(fn->inputs[k] = dup_or_empty(nd->input[k]))) {
          f->n_nodes++;
          return oom(st);
        }
    }
  }
  if (fd->n_control_ret && !(f->control_ret = dfx__calloc(fd->n_control_ret, sizeof(char *)))) return oom(st);
  for (size_t i = 0; i < fd->n_control_ret; i++, f->n_control_ret++)
    if (!(f->control_ret[i] = dup_or_empty(fd->control_ret[i]->value))) return oom(st);
  if (fd->n_attr && !(f->attrs = dfx__calloc(fd->n_attr, sizeof *f->attrs))) return oom(st);
  for (size_t i = 0; i < fd->n_attr; i++, f->n_attrs++) {
    dfx_attr *a = &f->attrs[i];
    if (!(a->name = dup_or_empty(fd->attr[i]->key))) return oom(st);
    if (fd->attr[i]->value && (c = dfx__attr_from_proto(fd->attr[i]->value, a, st)) != DFX_OK) {
      f->n_attrs++;
      return c;
    }
  }
  return DFX_OK;
}

static int cmp_fn(const void *a, const void *b) {
  return strcmp(((const dfx_function *)a)->sig.name, ((const dfx_function *)b)->sig.name);
}

dfx_code dfx__fn_lib_from_graph(const dfx_graph *g, dfx_fn_lib **out, dfx_status *st) {
  *out = NULL;
  dfx_fn_lib *lib = dfx__calloc(1, sizeof *lib);
  if (!lib) return oom(st);
  const Tensorflow__FunctionDefLibrary *pl = g->meta.library;
  dfx_code c = DFX_OK;
  if (pl && pl->n_function) {
    if (!(lib->fns = dfx__calloc(pl->n_function, sizeof *lib->fns))) {
      c = oom(st);
      goto fail;
    }
    for (size_t i = 0; i < pl->n_function; i++) {
      lib->n++; /* counted first, so a half-converted function is freed too */
      if ((c = convert_function(pl->function[i], &lib->fns[i], st)) != DFX_OK) goto fail;
    }
    qsort(lib->fns, (size_t)lib->n, sizeof *lib->fns, cmp_fn);
    for (int i = 1; i < lib->n; i++)
      if (strcmp(lib->fns[i - 1].sig.name, lib->fns[i].sig.name) == 0) {
        c = dfx__status_set(st, DFX_EINVAL, "function library: function '%s' is defined twice", lib->fns[i].sig.name);
        goto fail;
      }
  }
  *out = lib;
  return DFX_OK;
fail:
  dfx__fn_lib_free(lib);
  return c;
}

const dfx_function *dfx__fn_lib_find(const dfx_fn_lib *lib, const char *name) {
  if (!lib || !lib->n || !name) return NULL;
  dfx_function key = {.sig.name = (char *)name};
  return bsearch(&key, lib->fns, (size_t)lib->n, sizeof *lib->fns, cmp_fn);
}

const dfx_attr *dfx__function_attr(const dfx_function *f, const char *name) {
  for (int i = 0; i < f->n_attrs; i++)
    if (strcmp(f->attrs[i].name, name) == 0) return &f->attrs[i];
  return NULL;
}

bool dfx__graph_has_functions(const dfx_graph *g) {
  const Tensorflow__FunctionDefLibrary *pl = g->meta.library;
  return pl && pl->n_function > 0;
}

void dfx__graph_drop_library(dfx_graph *g) {
  if (g->meta.library) tensorflow__function_def_library__free_unpacked(g->meta.library, &dfx__pb_allocator);
  g->meta.library = NULL;
}

int dfx__graph_function_outputs(const dfx_graph *g, const char *op, dfx_dtype *types, int cap) {
  const Tensorflow__FunctionDefLibrary *pl = g->meta.library;
  for (size_t i = 0; pl && i < pl->n_function; i++) {
    const Tensorflow__OpDef *sig = pl->function[i]->signature;
    if (!sig || !sig->name || strcmp(sig->name, op) != 0) continue;
    for (size_t k = 0; k < sig->n_output_arg && (int)k < cap; k++)
      types[k] = sig->output_arg[k]->type ? dfx__dtype_from_wire(sig->output_arg[k]->type) : DFX_INVALID;
    return (int)sig->n_output_arg;
  }
  return -1;
}
