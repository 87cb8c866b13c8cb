/* ckpt.h - the checkpoint layer (above core and graph): TensorFlow's
 * checkpoint format (bundle.h over sstable.h), the checkpoint kernels, and
 * TF1 MetaGraphDef import. Public calls are in include/dfexec.h
 * (dfx_checkpoint_*, dfx_metagraph_*) and api/ckpt_api.c. */
#ifndef DFX_CKPT_H
#define DFX_CKPT_H

#include "dfexec.h"
#include "graph.h"
#include "kernel.h"
#include "status.h"

/* Adds SaveV2, RestoreV2 and MergeV2Checkpoints to r (api/lib.c calls it
 * beside dfx__kernels_register_all). */
void dfx__ckpt_kernels(dfx_registry *r);

/* One tensor of a signature: its key in the SignatureDef map, the graph
 * tensor it names ("x:0"), dtype and shape (ndims -1: unknown rank; a dim
 * -1: unknown). */
typedef struct dfx_sig_tensor {
  char *key;
  char *name;
  dfx_dtype dtype;
  int ndims;
  int64_t dims[DFX_MAX_DIMS];
} dfx_sig_tensor;

typedef struct dfx_signature {
  char *key;           /* "serving_default" */
  char *method;        /* "tensorflow/serving/predict" */
  int n_inputs, n_outputs;
  dfx_sig_tensor *inputs, *outputs; /* sorted by key */
} dfx_signature;

/* A MetaGraphDef made usable: the graph (final), the saver's tensor and
 * op names (NULL when it has no SaverDef), its tags and signatures. */
struct dfx_metagraph {
  dfx_graph *graph;
  char *filename_tensor;   /* "save/Const:0": feed it the checkpoint prefix */
  char *save_tensor;       /* "save/control_dependency:0": fetch it to save */
  char *restore_op;        /* "save/restore_all": run it to restore */
  int n_tags;
  char **tags;
  int n_sigs;
  dfx_signature *sigs;     /* sorted by key */
};

/* Builds a metagraph from an unpacked Tensorflow__MetaGraphDef (passed as
 * void*, so callers need no generated header): the SavedModel loader calls
 * it for each of its meta_graphs. *out is new (dfx_metagraph_free). Errors
 * are the graph import's, or DFX_EINVAL for a MetaGraphDef with no graph. */
dfx_code dfx__metagraph_from_proto(const void *msg, dfx_metagraph **out, dfx_status *st);

#endif
