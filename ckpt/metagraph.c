/* metagraph.c - TF1 MetaGraphDef (.meta) import: the graph_def through the
 * graph layer's import, the SaverDef's names, the tags and the signature
 * map, copied out of the protobuf so nothing generated escapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ckpt.h"
#include "graph_import.h"
#include "meta_graph.pb-c.h"
#include "pballoc.h"

void dfx_metagraph_free(dfx_metagraph *m) {
  if (!m) return;
  dfx_graph_free(m->graph);
  dfx__free(m->filename_tensor);
  dfx__free(m->save_tensor);
  dfx__free(m->restore_op);
  for (int i = 0; i < m->n_tags; i++) dfx__free(m->tags[i]);
  dfx__free(m->tags);
  for (int i = 0; i < m->n_sigs; i++) {
    dfx_signature *s = &m->sigs[i];
    for (int k = 0; k < s->n_inputs + s->n_outputs; k++) {
      dfx_sig_tensor *t = k < s->n_inputs ? &s->inputs[k] : &s->outputs[k - s->n_inputs];
      dfx__free(t->key);
      dfx__free(t->name);
    }
    dfx__free(s->inputs);
    dfx__free(s->outputs);
    dfx__free(s->key);
    dfx__free(s->method);
  }
  dfx__free(m->sigs);
  dfx__free(m);
}

/* A copy of a non-empty string, NULL for an empty one; *oom on failure. */
static char *dup_opt(const char *s, bool *oom) {
  if (!s || !*s) return NULL;
  char *d = dfx__strdup(s);
  if (!d) *oom = true;
  return d;
}

static int by_key(const void *a, const void *b) {
  return strcmp(((const dfx_sig_tensor *)a)->key, ((const dfx_sig_tensor *)b)->key);
}
static int sig_by_key(const void *a, const void *b) {
  return strcmp(((const dfx_signature *)a)->key, ((const dfx_signature *)b)->key);
}

static bool copy_tensors(Tensorflow__SignatureDef__InputsEntry **e, size_t n, dfx_sig_tensor **out, int *count) {
  *out = dfx__calloc(n ? n : 1, sizeof **out);
  if (!*out) return false;
  *count = (int)n;
  for (size_t i = 0; i < n; i++) {
    dfx_sig_tensor *t = &(*out)[i];
    const Tensorflow__TensorInfo *ti = e[i]->value;
    bool oom = false;
    t->key = dfx__strdup(e[i]->key ? e[i]->key : "");
    /* A sparse tensor is named by its values tensor. */
    const char *nm = !ti ? "" : ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_NAME ? ti->name
                            : ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_COO_SPARSE && ti->coo_sparse
                                ? ti->coo_sparse->values_tensor_name
                                : "";
    t->name = dfx__strdup(nm ? nm : "");
    if (!t->key || !t->name || oom) return false;
    t->dtype = ti ? (dfx_dtype)ti->dtype : DFX_INVALID;
    /* TF1 signatures may name a variable directly and record its ref
     * dtype (DT_FLOAT_REF = 101); refs are plain values here. */
    if (t->dtype > 100) t->dtype = (dfx_dtype)(t->dtype - 100);
    const Tensorflow__TensorShapeProto *sh = ti ? ti->tensor_shape : NULL;
    if (!sh || sh->unknown_rank || sh->n_dim > DFX_MAX_DIMS) {
      t->ndims = -1;
    } else {
      t->ndims = (int)sh->n_dim;
      for (int d = 0; d < t->ndims; d++) t->dims[d] = sh->dim[d]->size;
    }
  }
  if (n > 1) qsort(*out, n, sizeof **out, by_key);
  return true;
}

dfx_code dfx__metagraph_from_proto(const void *msg, dfx_metagraph **out, dfx_status *st) {
  const Tensorflow__MetaGraphDef *md = msg;
  *out = NULL;
  if (!md->graph_def) return dfx__status_set(st, DFX_EINVAL, "the MetaGraphDef has no graph_def");
  dfx_metagraph *m = dfx__calloc(1, sizeof *m);
  if (!m) return dfx__status_set(st, DFX_ENOMEM, "out of memory importing a MetaGraphDef");
  dfx_code c = dfx__graph_from_proto(md->graph_def, &m->graph, st);
  if (c != DFX_OK) goto fail;
  bool oom = false;
  if (md->saver_def) {
    m->filename_tensor = dup_opt(md->saver_def->filename_tensor_name, &oom);
    m->save_tensor = dup_opt(md->saver_def->save_tensor_name, &oom);
    m->restore_op = dup_opt(md->saver_def->restore_op_name, &oom);
  }
  const Tensorflow__MetaGraphDef__MetaInfoDef *mi = md->meta_info_def;
  if (mi && mi->n_tags) {
    if (!(m->tags = dfx__calloc(mi->n_tags, sizeof *m->tags))) oom = true;
    for (size_t i = 0; !oom && i < mi->n_tags; i++, m->n_tags++)
      if (!(m->tags[i] = dfx__strdup(mi->tags[i]))) oom = true;
  }
  if (!oom && md->n_signature_def) {
    if (!(m->sigs = dfx__calloc(md->n_signature_def, sizeof *m->sigs))) oom = true;
    for (size_t i = 0; !oom && i < md->n_signature_def; i++) {
      const Tensorflow__MetaGraphDef__SignatureDefEntry *e = md->signature_def[i];
      dfx_signature *s = &m->sigs[m->n_sigs++];
      const Tensorflow__SignatureDef *sd = e->value;
      s->key = dfx__strdup(e->key ? e->key : "");
      s->method = dfx__strdup(sd && sd->method_name ? sd->method_name : "");
      if (!s->key || !s->method) oom = true;
      /* The outputs map entries have the inputs map's layout. */
      if (!oom && sd &&
          (!copy_tensors(sd->inputs, sd->n_inputs, &s->inputs, &s->n_inputs) ||
           !copy_tensors((Tensorflow__SignatureDef__InputsEntry **)sd->outputs, sd->n_outputs, &s->outputs,
                         &s->n_outputs)))
        oom = true;
    }
    if (!oom && m->n_sigs > 1) qsort(m->sigs, (size_t)m->n_sigs, sizeof *m->sigs, sig_by_key);
  }
  if (oom) {
    c = dfx__status_set(st, DFX_ENOMEM, "out of memory importing a MetaGraphDef");
    goto fail;
  }
  *out = m;
  return DFX_OK;
fail:
  dfx_metagraph_free(m);
  return c;
}

dfx_code dfx_metagraph_import(const void *buf, size_t len, dfx_metagraph **out, dfx_status *st) {
  if (out) *out = NULL;
  if (!out || (!buf && len)) return dfx__status_set(st, DFX_EINVAL, "dfx_metagraph_import: NULL argument");
  int oom = 0;
  ProtobufCAllocator flagged = dfx__pb_allocator_flagged(&oom);
  Tensorflow__MetaGraphDef *md = tensorflow__meta_graph_def__unpack(&flagged, len, buf);
  if (!md)
    return oom ? dfx__status_set(st, DFX_ENOMEM, "out of memory unpacking a %zu-byte MetaGraphDef", len)
               : dfx__status_set(st, DFX_EINVAL, "not a valid binary MetaGraphDef (protobuf parse failed on %zu bytes)",
                                 len);
  dfx_code c = dfx__metagraph_from_proto(md, out, st);
  tensorflow__meta_graph_def__free_unpacked(md, &dfx__pb_allocator);
  return c;
}

dfx_code dfx_metagraph_load(const char *path, dfx_metagraph **out, dfx_status *st) {
  if (out) *out = NULL;
  if (!path || !out) return dfx__status_set(st, DFX_EINVAL, "dfx_metagraph_load: NULL argument");
  char *data = NULL;
  size_t len = 0;
  dfx_code c = dfx__read_file(path, &data, &len, st);
  if (c != DFX_OK) return c;
  c = dfx_metagraph_import(data, len, out, st);
  dfx__free(data);
  if (c != DFX_OK && c != DFX_ENOMEM && st) {
    char msg[DFX_STATUS_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", st->msg);
    dfx__status_set(st, c, "%s: %s", path, msg);
  }
  return c;
}

const dfx_graph *dfx_metagraph_graph(const dfx_metagraph *m) { return m ? m->graph : NULL; }
const char *dfx_metagraph_saver_filename_tensor(const dfx_metagraph *m) { return m ? m->filename_tensor : NULL; }
const char *dfx_metagraph_saver_save_tensor(const dfx_metagraph *m) { return m ? m->save_tensor : NULL; }
const char *dfx_metagraph_saver_restore_op(const dfx_metagraph *m) { return m ? m->restore_op : NULL; }
int dfx_metagraph_tag_count(const dfx_metagraph *m) { return m ? m->n_tags : 0; }
const char *dfx_metagraph_tag(const dfx_metagraph *m, int i) {
  return m && i >= 0 && i < m->n_tags ? m->tags[i] : NULL;
}

/* ---- signatures ---- */

int dfx_metagraph_signature_count(const dfx_metagraph *m) { return m ? m->n_sigs : 0; }

const char *dfx_metagraph_signature_key(const dfx_metagraph *m, int i) {
  return m && i >= 0 && i < m->n_sigs ? m->sigs[i].key : NULL;
}

int dfx_metagraph_signature_find(const dfx_metagraph *m, const char *key) {
  for (int i = 0; m && key && i < m->n_sigs; i++)
    if (strcmp(m->sigs[i].key, key) == 0) return i;
  return -1;
}

int dfx_metagraph_signature_size(const dfx_metagraph *m, int i, int output) {
  if (!m || i < 0 || i >= m->n_sigs) return 0;
  return output ? m->sigs[i].n_outputs : m->sigs[i].n_inputs;
}

dfx_code dfx_metagraph_signature_tensor(const dfx_metagraph *m, int i, int output, int j, const char **key,
                                        const char **tensor, dfx_dtype *dtype, int *ndims, const int64_t **dims,
                                        dfx_status *st) {
  if (!m || i < 0 || i >= m->n_sigs || j < 0 || j >= dfx_metagraph_signature_size(m, i, output))
    return dfx__status_set(st, DFX_ERANGE, "no signature tensor (%d, %s %d)", i, output ? "output" : "input", j);
  const dfx_sig_tensor *t = output ? &m->sigs[i].outputs[j] : &m->sigs[i].inputs[j];
  if (key) *key = t->key;
  if (tensor) *tensor = t->name;
  if (dtype) *dtype = t->dtype;
  if (ndims) *ndims = t->ndims;
  if (dims) *dims = t->dims;
  return DFX_OK;
}
