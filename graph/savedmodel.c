/* savedmodel.c - SavedModel and MetaGraphDef containers (savedmodel.h).
 * A binary SavedModel starts with field 1 (a varint) or 2 (its
 * MetaGraphDefs), and a GraphDef never has a varint field 1, so a file that
 * failed to read as a GraphDef is tried as a SavedModel first, then as a
 * MetaGraphDef; either must hold a GraphDef to count. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "graph_import.h"
#include "pballoc.h"
#include "savedmodel.h"
#include "saved_model.pb-c.h"

typedef struct container {
  Tensorflow__SavedModel *sm;
  Tensorflow__MetaGraphDef *mg; /* when the file is one MetaGraphDef */
  size_t n;
  Tensorflow__MetaGraphDef **metas;
} container;

static bool open_container(const void *buf, size_t len, container *c) {
  memset(c, 0, sizeof *c);
  c->sm = tensorflow__saved_model__unpack(&dfx__pb_allocator, len, buf);
  if (c->sm && c->sm->n_meta_graphs) {
    bool ok = true;
    for (size_t i = 0; i < c->sm->n_meta_graphs; i++) ok &= c->sm->meta_graphs[i]->graph_def != NULL;
    if (ok) {
      c->n = c->sm->n_meta_graphs;
      c->metas = c->sm->meta_graphs;
      return true;
    }
  }
  if (c->sm) tensorflow__saved_model__free_unpacked(c->sm, &dfx__pb_allocator);
  c->sm = NULL;
  c->mg = tensorflow__meta_graph_def__unpack(&dfx__pb_allocator, len, buf);
  if (c->mg && c->mg->graph_def && c->mg->graph_def->n_node) {
    c->n = 1;
    c->metas = &c->mg;
    return true;
  }
  if (c->mg) tensorflow__meta_graph_def__free_unpacked(c->mg, &dfx__pb_allocator);
  c->mg = NULL;
  return false;
}

static void close_container(container *c) {
  if (c->sm) tensorflow__saved_model__free_unpacked(c->sm, &dfx__pb_allocator);
  if (c->mg) tensorflow__meta_graph_def__free_unpacked(c->mg, &dfx__pb_allocator);
  memset(c, 0, sizeof *c);
}

/* A signature tensor's name: dense tensors have one; a sparse one is shown
 * as such (its three component names are not needed for a summary). */
static const char *info_name(const Tensorflow__TensorInfo *t) {
  if (!t) return "?";
  if (t->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_NAME) return t->name;
  return t->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_COO_SPARSE ? "(sparse)" : "?";
}

static void tags_str(const Tensorflow__MetaGraphDef *m, char *buf, size_t n) {
  size_t o = 0;
  buf[0] = 0;
  size_t nt = m->meta_info_def ? m->meta_info_def->n_tags : 0;
  for (size_t t = 0; t < nt && o < n; t++) o += (size_t)snprintf(buf + o, n - o, "%s%s", t ? "," : "", m->meta_info_def->tags[t]);
  if (!nt) snprintf(buf, n, "(none)");
}

#define APPEND(...)                                                   \
  do {                                                                \
    if (o < n) o += (size_t)snprintf(msg + o, n - o, __VA_ARGS__);    \
  } while (0)

bool dfx__savedmodel_describe(const void *buf, size_t len, char *msg, size_t n) {
  container c;
  if (!buf || !open_container(buf, len, &c)) return false;
  size_t o = 0;
  APPEND("this is a TensorFlow %s, not a GraphDef:", c.sm ? "SavedModel" : "MetaGraphDef");
  for (size_t i = 0; i < c.n; i++) {
    const Tensorflow__MetaGraphDef *m = c.metas[i];
    char tags[256];
    tags_str(m, tags, sizeof tags);
    APPEND(" meta graph %zu: tags {%s}, %zu nodes, %zu functions", i, tags, m->graph_def->n_node,
           m->graph_def->library ? m->graph_def->library->n_function : 0);
    for (size_t s = 0; s < m->n_signature_def; s++) {
      const Tensorflow__SignatureDef *sd = m->signature_def[s]->value;
      APPEND("%s signature '%s' (", s ? ";" : ";", m->signature_def[s]->key);
      for (size_t k = 0; sd && k < sd->n_inputs; k++)
        APPEND("%s%s=%s", k ? ", " : "", sd->inputs[k]->key, info_name(sd->inputs[k]->value));
      APPEND(" -> ");
      for (size_t k = 0; sd && k < sd->n_outputs; k++)
        APPEND("%s%s=%s", k ? ", " : "", sd->outputs[k]->key, info_name(sd->outputs[k]->value));
      APPEND(")");
    }
    APPEND(".");
  }
  APPEND(" Its variables live in the variables/ directory beside it, which a GraphDef cannot carry. To get its graph"
         " as a GraphDef: dfexec convert FILE graph.pb (variables stay unrestored; functional control flow is lowered"
         " when it runs, or by dfexec optimize).");
  close_container(&c);
  return true;
}

/* The MetaGraphDef for `tags` (see savedmodel.h), or NULL with st set. */
static const Tensorflow__MetaGraphDef *pick(const container *c, const char *tags, dfx_status *st) {
  char want[256];
  snprintf(want, sizeof want, "%s", tags ? tags : "");
  if (!*want) {
    if (c->n == 1) return c->metas[0];
    snprintf(want, sizeof want, "serve");
  }
  for (size_t i = 0; i < c->n; i++) {
    char have[256];
    tags_str(c->metas[i], have, sizeof have);
    if (strcmp(have, want) == 0) return c->metas[i];
  }
  char list[512];
  size_t o = 0;
  list[0] = 0;
  for (size_t i = 0; i < c->n && o < sizeof list; i++) {
    char have[256];
    tags_str(c->metas[i], have, sizeof have);
    o += (size_t)snprintf(list + o, sizeof list - o, "%s{%s}", i ? ", " : "", have);
  }
  dfx__status_set(st, DFX_EINVAL, "no meta graph has the tags {%s}; the tag sets are: %s", want, list);
  return NULL;
}

dfx_code dfx__savedmodel_import(const void *buf, size_t len, const char *tags, dfx_graph **out, dfx_status *st) {
  *out = NULL;
  container c;
  if (!open_container(buf, len, &c))
    return dfx__status_set(st, DFX_EINVAL, "not a SavedModel or MetaGraphDef (%zu bytes)", len);
  const Tensorflow__MetaGraphDef *m = pick(&c, tags, st);
  dfx_code rc = m ? dfx__graph_from_proto(m->graph_def, out, st) : DFX_EINVAL;
  close_container(&c);
  return rc;
}

dfx_code dfx__savedmodel_graphdef(const void *buf, size_t len, const char *tags, void **bytes, size_t *n,
                                  dfx_status *st) {
  *bytes = NULL;
  *n = 0;
  container c;
  if (!open_container(buf, len, &c))
    return dfx__status_set(st, DFX_EINVAL, "not a SavedModel or MetaGraphDef (%zu bytes)", len);
  const Tensorflow__MetaGraphDef *m = pick(&c, tags, st);
  dfx_code rc = DFX_EINVAL;
  if (m) {
    size_t sz = tensorflow__graph_def__get_packed_size(m->graph_def);
    if ((*bytes = dfx__malloc(sz + 1))) {
      *n = tensorflow__graph_def__pack(m->graph_def, *bytes);
      rc = DFX_OK;
    } else {
      rc = dfx__status_set(st, DFX_ENOMEM, "out of memory");
    }
  }
  close_container(&c);
  return rc;
}
