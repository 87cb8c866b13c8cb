/* dfexec.h - public C API of dfexec, a TensorFlow 1.x GraphDef executor.
 *
 * Objects are opaque. dfx_<object>_new (or _import/_load) makes one and
 * dfx_<object>_free releases it; _free(NULL) is always a no-op. Every fallible
 * call returns a dfx_code (DFX_OK is 0, errors are negative) and, when its
 * last argument `st` is not NULL, leaves a readable message there naming the
 * node, op, frame and iteration involved. Output parameters are set to NULL
 * on failure: no half-built object ever escapes.
 *
 * Ownership words used below: "borrows" (the caller keeps ownership and the
 * object must stay alive for the call, or as stated), "takes" (ownership
 * passes to dfexec), "returns new" (the caller owns the result and frees it). */
#ifndef DFEXEC_H
#define DFEXEC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && !defined(DFX_STATIC_BUILD)
#define DFX_API __attribute__((visibility("default")))
#else
#define DFX_API
#endif

/* ---- result codes ---------------------------------------------------- */

/* X-macro of every result code: name, value, short description. */
#define DFX_CODE_MAP(XX)                                                     \
  XX(OK, 0, "success")                                                       \
  XX(EINVAL, -1, "invalid argument")                                         \
  XX(ENOTFOUND, -2, "not found")                                             \
  XX(EUNIMPL, -3, "unimplemented")                                           \
  XX(ENOMEM, -4, "out of memory")                                            \
  XX(ECANCELED, -5, "cancelled")                                             \
  XX(EINTERNAL, -6, "internal error")                                        \
  XX(EDEADLINE, -7, "deadline exceeded")                                     \
  XX(ERANGE, -8, "out of range")                                             \
  XX(EIO, -9, "input/output error")                                          \
  XX(EPRECOND, -10, "failed precondition")                                   \
  XX(ELIMIT, -11, "resource limit exceeded")                                 \
  XX(ESTUCK, -12, "step cannot make progress")

typedef enum dfx_code {
#define DFX_XX_(name, value, text) DFX_##name = (value),
  DFX_CODE_MAP(DFX_XX_)
#undef DFX_XX_
  DFX_CODE_MIN_ = -13
} dfx_code;

/* Returns the constant name of a code ("DFX_EINVAL"); never NULL. */
DFX_API const char *dfx_code_name(dfx_code code);

/* ---- version and library memory ---------------------------------------- */

/* Version of this header. dfx_version() gives the library's own, which must
 * match when the program and the shared library come from the same release. */
#define DFX_VERSION_MAJOR 0
#define DFX_VERSION_MINOR 1
#define DFX_VERSION_PATCH 0

/* Returns the library version as "MAJOR.MINOR.PATCH" (a static string, never
 * NULL, nothing to free). Thread-safe. */
DFX_API const char *dfx_version(void);

/* Frees a buffer that a dfx_ call returned as "new, free with dfx_free" (for
 * example from dfx_builder_serialize). It goes back through the allocator set
 * with dfx_set_allocator, which is why plain free() must not be used. Takes
 * `p`; NULL is a no-op. */
DFX_API void dfx_free(void *p);

/* ---- data types -------------------------------------------------------- */

/* Element types, numbered exactly as TensorFlow's DataType enum so that a
 * GraphDef value converts by a range check. The one list of dtypes: the
 * enum, their names and the library's trait table are generated from it.
 * Columns: name, TF number, numpy name, TF's enum name, element size in
 * bytes (0: not a plain array element). */
#define DFX_DTYPE_MAP(XX)                         \
  XX(F32, 1, "float32", "DT_FLOAT", 4)            \
  XX(F64, 2, "float64", "DT_DOUBLE", 8)           \
  XX(I32, 3, "int32", "DT_INT32", 4)              \
  XX(U8, 4, "uint8", "DT_UINT8", 1)               \
  XX(I16, 5, "int16", "DT_INT16", 2)              \
  XX(I8, 6, "int8", "DT_INT8", 1)                 \
  XX(STRING, 7, "string", "DT_STRING", 0)         \
  XX(C64, 8, "complex64", "DT_COMPLEX64", 8)      \
  XX(I64, 9, "int64", "DT_INT64", 8)              \
  XX(BOOL, 10, "bool", "DT_BOOL", 1)              \
  XX(QI8, 11, "qint8", "DT_QINT8", 1)             \
  XX(QU8, 12, "quint8", "DT_QUINT8", 1)           \
  XX(QI32, 13, "qint32", "DT_QINT32", 4)          \
  XX(BF16, 14, "bfloat16", "DT_BFLOAT16", 2)      \
  XX(QI16, 15, "qint16", "DT_QINT16", 2)          \
  XX(QU16, 16, "quint16", "DT_QUINT16", 2)        \
  XX(U16, 17, "uint16", "DT_UINT16", 2)           \
  XX(C128, 18, "complex128", "DT_COMPLEX128", 16) \
  XX(F16, 19, "float16", "DT_HALF", 2)            \
  XX(RESOURCE, 20, "resource", "DT_RESOURCE", 0)  \
  XX(VARIANT, 21, "variant", "DT_VARIANT", 0)     \
  XX(U32, 22, "uint32", "DT_UINT32", 4)           \
  XX(U64, 23, "uint64", "DT_UINT64", 8)

typedef enum dfx_dtype {
  DFX_INVALID = 0,
#define DFX_XX_(name, num, np_name, tf_name, size) DFX_##name = (num),
  DFX_DTYPE_MAP(DFX_XX_)
#undef DFX_XX_
  DFX_DTYPE_END_ = 24
} dfx_dtype;

/* numpy-style name ("float32"), or "invalid" for an unknown value. */
DFX_API const char *dfx_dtype_name(dfx_dtype dtype);
/* Bytes per element; 0 for string, resource, variant and invalid types. */
DFX_API size_t dfx_dtype_size(dfx_dtype dtype);
/* Parses a numpy-style name ("float32", "bool"); DFX_INVALID if unknown. */
DFX_API dfx_dtype dfx_dtype_from_name(const char *name);

/* ---- status ------------------------------------------------------------- */

/* A code plus a message. Not thread-safe: use one per thread. */
typedef struct dfx_status dfx_status;

/* Returns new status holding DFX_OK, or NULL when out of memory. */
DFX_API dfx_status *dfx_status_new(void);
DFX_API void dfx_status_free(dfx_status *st);
DFX_API dfx_code dfx_status_code(const dfx_status *st);
/* Borrowed message, valid until `st` is next passed to a call. "" for OK. */
DFX_API const char *dfx_status_message(const dfx_status *st);

/* ---- memory --------------------------------------------------------------- */

/* One allocation hook for the whole library, in Lua's lua_Alloc shape:
 * with nsize == 0 it frees `ptr` (returning NULL); otherwise it resizes `ptr`
 * (NULL: allocate) from osize to nsize bytes and returns the block or NULL.
 * Set it before creating any object; NULL restores malloc/free. */
typedef void *(*dfx_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);
DFX_API void dfx_set_allocator(dfx_alloc_fn fn, void *ud);

/* ---- tensors ------------------------------------------------------------ */

/* Dense row-major tensor. Reference counted internally; dfx_tensor_free drops
 * the caller's reference. Up to DFX_MAX_DIMS dimensions. Tensors are
 * immutable once handed to a session run. */
typedef struct dfx_tensor dfx_tensor;
#define DFX_MAX_DIMS 8

/* Returns new zero-filled tensor (empty strings for DFX_STRING), or NULL when
 * the shape is invalid, too large, or memory runs out. Borrows `dims`. */
DFX_API dfx_tensor *dfx_tensor_new(dfx_dtype dtype, const int64_t *dims, int ndims);
/* Returns new tensor holding a copy of `nbytes` bytes at `data` (borrowed),
 * which must equal element count times element size. Not for DFX_STRING. */
DFX_API dfx_tensor *dfx_tensor_new_copy(dfx_dtype dtype, const int64_t *dims, int ndims,
                                        const void *data, size_t nbytes);
/* A new tensor holding t's values converted to dtype `to`: the opt-in
 * conversion for feeds (dfx_session_run itself never converts; a feed of
 * the wrong dtype is DFX_EINVAL). numpy astype's rules where they are
 * defined: floats to integers truncate toward zero, anything to bool is
 * "not zero", 64-bit integers keep every bit. Where astype is undefined (NaN,
 * an infinity or an out-of-range value to an integer type) it fails with
 * DFX_ERANGE naming the element. Numbers and bools only (DFX_EINVAL
 * otherwise). *out is new; free it with dfx_tensor_free. */
DFX_API dfx_code dfx_tensor_convert(const dfx_tensor *t, dfx_dtype to, dfx_tensor **out, dfx_status *st);
/* Returns new tensor over caller memory: `data` is used in place and
 * `dealloc(data, ud)` is called when the last reference goes (may be NULL).
 * On failure (NULL return) dealloc is not called. Not for DFX_STRING. */
DFX_API dfx_tensor *dfx_tensor_new_wrap(dfx_dtype dtype, const int64_t *dims, int ndims,
                                        void *data, size_t nbytes,
                                        void (*dealloc)(void *data, void *ud), void *ud);
DFX_API void dfx_tensor_free(dfx_tensor *t);
/* Sets the largest tensor, in bytes, that any kernel, import or
 * dfx_tensor_new may create in this process; a larger one fails with
 * DFX_ELIMIT (a kernel error naming the node) instead of exhausting memory.
 * 0 restores the default: half the machine's physical memory, at most
 * 64 GiB. Returns the previous limit in effect. Process-wide
 * and thread-safe; runs already in progress see the new value from their next
 * allocation on. Buffers that are not tensors (kernel scratch space, plans)
 * are not counted. */
DFX_API size_t dfx_set_max_tensor_bytes(size_t max_bytes);
DFX_API dfx_dtype dfx_tensor_dtype(const dfx_tensor *t);
DFX_API int dfx_tensor_ndims(const dfx_tensor *t);
/* Size of dimension i; -1 when i is out of range. */
DFX_API int64_t dfx_tensor_dim(const dfx_tensor *t, int i);
DFX_API int64_t dfx_tensor_count(const dfx_tensor *t);
DFX_API size_t dfx_tensor_nbytes(const dfx_tensor *t);
/* Borrowed pointer to the elements (NULL for string tensors). */
DFX_API void *dfx_tensor_data(const dfx_tensor *t);
/* String element i: borrowed bytes (not NUL-terminated) and length. */
DFX_API const char *dfx_tensor_string(const dfx_tensor *t, int64_t i, size_t *len);
/* Copies `len` bytes into string element i. DFX_ENOMEM or DFX_EINVAL. */
DFX_API dfx_code dfx_tensor_set_string(dfx_tensor *t, int64_t i, const char *s, size_t len);

/* ---- graphs ------------------------------------------------------------- */

/* An imported, validated graph. Immutable; safe to share between threads. */
typedef struct dfx_graph dfx_graph;

/* A tensor in TensorFlow's "node:index" notation. */
typedef struct dfx_port {
  const char *node;
  int index;
} dfx_port;

/* Parses a GraphDef from memory: binary protobuf, or text format when the
 * bytes look like text. Borrows `buf`. On success *out is new. */
DFX_API dfx_code dfx_graph_import(const void *buf, size_t len, dfx_graph **out, dfx_status *st);
/* Reads and imports a file; ".pbtxt"/".txt" selects text format, other
 * names are detected from the content. */
DFX_API dfx_code dfx_graph_load(const char *path, dfx_graph **out, dfx_status *st);
DFX_API void dfx_graph_free(dfx_graph *g);
/* Writes the graph as a GraphDef: binary protobuf (text == 0) or
 * TensorFlow's text format. Every attr is written, the defaults filled in at
 * import included (as TensorFlow's own exporter does), with the versions and
 * function library the graph came with. On success *buf is new (free it with
 * dfx_free; text is NUL-terminated) and *len its length without any
 * terminator. Borrows `g`. DFX_EINVAL or DFX_ENOMEM. Thread-safe. */
DFX_API dfx_code dfx_graph_serialize(const dfx_graph *g, int text, void **buf, size_t *len, dfx_status *st);
/* dfx_graph_serialize into the file `path` (borrowed): text format for
 * names ending in ".pbtxt" or ".txt", binary otherwise. DFX_EIO when the
 * file cannot be written. */
DFX_API dfx_code dfx_graph_save(const dfx_graph *g, const char *path, dfx_status *st);

DFX_API int dfx_graph_node_count(const dfx_graph *g);
/* Index of the node named `name`, or -1. */
DFX_API int dfx_graph_node_find(const dfx_graph *g, const char *name);
/* Borrowed strings, valid while `g` lives. NULL when i is out of range. */
DFX_API const char *dfx_graph_node_name(const dfx_graph *g, int i);
DFX_API const char *dfx_graph_node_op(const dfx_graph *g, int i);
/* Frame name of node i ("" for the root frame). */
DFX_API const char *dfx_graph_node_frame(const dfx_graph *g, int i);
DFX_API int dfx_graph_node_num_inputs(const dfx_graph *g, int i);
DFX_API int dfx_graph_node_num_outputs(const dfx_graph *g, int i);
/* Data input k of node i as its producer port; {NULL, -1} if out of range. */
DFX_API dfx_port dfx_graph_node_input(const dfx_graph *g, int i, int k);
DFX_API dfx_dtype dfx_graph_node_output_dtype(const dfx_graph *g, int i, int k);
/* Number of control inputs of node i and the producer index of the k-th. */
DFX_API int dfx_graph_node_num_control_inputs(const dfx_graph *g, int i);
DFX_API int dfx_graph_node_control_input(const dfx_graph *g, int i, int k);

/* The graph's outputs, as `dfexec info` lists them and `dfexec run` fetches
 * them by default: root-frame tensors no node consumes (inputs of _Retval
 * count as outputs; Switch outputs, tf.cond pivots and a Merge's value_index
 * are left out, since they may be dead). Writes up to `max` ports to `out`
 * (node names borrowed from g) and returns how many there are in all: call
 * with out NULL to size the array. -1 when out of memory. Thread-safe. */
DFX_API int dfx_graph_outputs(const dfx_graph *g, dfx_port *out, int max);
/* Parses TensorFlow's tensor notation, "node:k" or "node" (output 0), into
 * *out. The node name is copied into buf (n bytes) and out->node points
 * there. DFX_EINVAL for an empty name, a non-decimal index or a control
 * input ("^node"); DFX_ERANGE when buf is too small. */
DFX_API dfx_code dfx_port_parse(const char *text, char *buf, size_t n, dfx_port *out, dfx_status *st);
/* A copy of g with TensorFlow's graph-level random seed `seed` applied: every
 * random op whose seed and seed2 attrs are both 0 (TF's "nondeterministic",
 * what a frozen graph holds for ops the user did not seed) gets seed =
 * `seed` and a seed2 derived from its node name, so runs repeat exactly;
 * explicitly seeded ops keep their seeds. *out is new (free with
 * dfx_graph_free); *n_seeded (may be NULL) counts the ops changed. Borrows
 * g. DFX_EINVAL, DFX_ENOMEM. */
DFX_API dfx_code dfx_graph_seed(const dfx_graph *g, int64_t seed, dfx_graph **out, int *n_seeded, dfx_status *st);

/* ---- import options ------------------------------------------------------- */

/* One input remapping for dfx_graph_import_ex: every consumer of tensor
 * `from` reads tensor `to` instead. Both use TensorFlow's tensor notation:
 * "node:k", "node" (the same as "node:0"), or "^node" for a control input,
 * in which case the other must be a control input too. */
typedef struct dfx_input_map {
  const char *from;  /* tensor of the imported graph to replace */
  const char *to;    /* tensor of the imported graph that replaces it */
} dfx_input_map;

/* Options for dfx_graph_import_ex. Zero-initialise and set what is needed;
 * every pointer is borrowed for the duration of the call only. */
typedef struct dfx_import_options {
  /* Prepended as "prefix/" to every node name, to every input reference and
   * to the frame_name of every Enter, so the graph stays self-consistent.
   * NULL or "" for none. The prefixed names must be valid node names. */
  const char *prefix;
  /* Remappings applied before the prefix: `from` and `to` are written with
   * the graph's own (unprefixed) names. Unlike TensorFlow, whose input_map
   * points into another graph, `to` must name a node of the imported graph,
   * e.g. a second Placeholder that replaces an input. The inputs of the `to`
   * node itself are left alone, so it may consume the tensor it replaces. */
  const dfx_input_map *input_map;
  int n_input_map;
} dfx_import_options;

/* dfx_graph_import with options (`opts` may be NULL: same as
 * dfx_graph_import). Borrows `buf` and `opts`; on success *out is new.
 * Returns DFX_EINVAL for a malformed graph or option (a remapping whose
 * `from` is given twice, a data tensor mapped to a control input, a prefix
 * that makes invalid names), DFX_ENOTFOUND when a remapping names a node the
 * graph does not have, DFX_EUNIMPL for unknown ops and DFX_ENOMEM.
 * Thread-safe. */
DFX_API dfx_code dfx_graph_import_ex(const void *buf, size_t len, const dfx_import_options *opts,
                                     dfx_graph **out, dfx_status *st);

/* ---- graph inspection: placeholders and attributes ------------------------ */

/* One graph input, as listed by dfx_graph_placeholders. */
typedef struct dfx_placeholder {
  const char *name;      /* borrowed from the graph */
  int node;              /* node index */
  dfx_dtype dtype;       /* the "dtype" attr */
  int rank;              /* -1 when the rank is unknown */
  const int64_t *dims;   /* borrowed; `rank` sizes, -1 for an unknown one; NULL if rank <= 0 */
  int has_default;       /* 1 for PlaceholderWithDefault: feeding is optional */
} dfx_placeholder;

/* Lists the Placeholder, PlaceholderV2 and PlaceholderWithDefault nodes of
 * `g` in node order: fills out[0 .. min(count, cap) - 1] and returns the
 * total count, so a first call with cap 0 (out may then be NULL) sizes the
 * array. Borrows `g`; the strings and dims in `out` live as long as `g`.
 * Returns DFX_EINVAL (negative) for a NULL graph, or a NULL `out` with
 * cap > 0. Thread-safe. */
DFX_API int dfx_graph_placeholders(const dfx_graph *g, dfx_placeholder *out, int cap);

/* Number of attrs of node i (those in the GraphDef plus the defaults the op
 * signature added at import); 0 when i is out of range. */
DFX_API int dfx_graph_node_num_attrs(const dfx_graph *g, int i);
/* Name of attr k of node i, borrowed from `g`; NULL when out of range. */
DFX_API const char *dfx_graph_node_attr_name(const dfx_graph *g, int i, int k);
/* Kind of attr `name` of node i as TensorFlow spells attr types: "int",
 * "float", "bool", "type", "string", "shape", "tensor", "func",
 * "placeholder", "list(int)", "list(type)", ... ("list()" for an empty
 * list). A static string; NULL when the node or attr does not exist. */
DFX_API const char *dfx_graph_node_attr_kind(const dfx_graph *g, int i, const char *name);

/* Typed reads of attr `name` of node i. All borrow `g` and `name`. Each
 * returns DFX_OK and sets its outputs, DFX_EINVAL for a NULL argument, a node
 * index out of range or an attr of another kind, or DFX_ENOTFOUND when the
 * node has no such attr. Outputs are untouched on error. Thread-safe. */
DFX_API dfx_code dfx_graph_node_attr_int(const dfx_graph *g, int i, const char *name, int64_t *out,
                                         dfx_status *st);
DFX_API dfx_code dfx_graph_node_attr_float(const dfx_graph *g, int i, const char *name, float *out,
                                           dfx_status *st);
/* *out is 0 or 1. */
DFX_API dfx_code dfx_graph_node_attr_bool(const dfx_graph *g, int i, const char *name, int *out,
                                          dfx_status *st);
DFX_API dfx_code dfx_graph_node_attr_type(const dfx_graph *g, int i, const char *name, dfx_dtype *out,
                                          dfx_status *st);
/* *out is borrowed from `g` and NUL-terminated; *len (may be NULL) gets the
 * byte length, which counts any embedded NUL bytes. */
DFX_API dfx_code dfx_graph_node_attr_string(const dfx_graph *g, int i, const char *name, const char **out,
                                            size_t *len, dfx_status *st);
/* *rank is -1 for an unknown rank; *dims is borrowed (NULL when rank <= 0). */
DFX_API dfx_code dfx_graph_node_attr_shape(const dfx_graph *g, int i, const char *name, int *rank,
                                           const int64_t **dims, dfx_status *st);
/* Returns new: *out is a new reference to the (immutable) attr tensor, which
 * the caller releases with dfx_tensor_free. */
DFX_API dfx_code dfx_graph_node_attr_tensor(const dfx_graph *g, int i, const char *name, dfx_tensor **out,
                                            dfx_status *st);
/* List attrs: *vals is borrowed from `g`, *n its length. An empty list
 * matches both calls. */
DFX_API dfx_code dfx_graph_node_attr_ints(const dfx_graph *g, int i, const char *name, const int64_t **vals,
                                          int *n, dfx_status *st);
DFX_API dfx_code dfx_graph_node_attr_types(const dfx_graph *g, int i, const char *name,
                                           const dfx_dtype **vals, int *n, dfx_status *st);

/* ---- graph optimisation ------------------------------------------------- */

/* What dfx_graph_optimize keeps and prunes to. With fetches or targets the
 * graph is pruned to what they need (as a run with those ports), and the
 * fed, fetched and target nodes keep their names and outputs; with none,
 * every placeholder and every root-frame node nobody consumes is kept and
 * nothing is pruned. Feeds and placeholders are never folded to constants. */
typedef struct dfx_optimize_options {
  /* NULL or "default": the default pipeline; "none": no pass; or a comma-
   * separated list of pass names, run in that order (dfx_optimize_pass). */
  const char *passes;
  const dfx_port *feeds;
  int n_feeds;
  const dfx_port *fetches;
  int n_fetches;
  const char *const *targets;
  int n_targets;
} dfx_optimize_options;

/* What one pass did in one round of the pipeline. */
typedef struct dfx_optimize_stat {
  const char *pass;      /* static */
  int round;             /* 1-based; the pipeline repeats until nothing changes (at most 3 rounds) */
  int removed, added, rewritten; /* nodes */
  double ms;             /* time the pass took */
} dfx_optimize_stat;

typedef struct dfx_optimize_report {
  int nodes_before, nodes_after;
  int n_stats;
  dfx_optimize_stat *stats;
} dfx_optimize_report;

/* A new graph: g optimised by the passes of `opts` (NULL: the default
 * pipeline, nothing pruned). g is only read. `report` (may be NULL) is
 * filled on success; free it with dfx_optimize_report_free. Errors:
 * DFX_EINVAL for an unknown pass or port (naming it), DFX_ENOMEM, and a
 * pass's own error naming the pass. Thread-safe. */
DFX_API dfx_code dfx_graph_optimize(const dfx_graph *g, const dfx_optimize_options *opts, dfx_graph **out,
                                    dfx_optimize_report *report, dfx_status *st);
DFX_API void dfx_optimize_report_free(dfx_optimize_report *r);
/* The i-th pass in pipeline order (0 <= i < count): its name (static), a
 * one-line purpose and whether the default pipeline runs it; NULL past the
 * end. purpose and in_default may be NULL. */
DFX_API const char *dfx_optimize_pass(int i, const char **purpose, int *in_default);

/* ---- gradients ---------------------------------------------------------- */

/* Reverse-mode differentiation, with tf.gradients' semantics: a new graph
 * holding g and the nodes that compute, for each x in xs, the gradient of
 * sum(ys) with respect to x (docs/autodiff.md). grad_ys (NULL, or n_ys
 * ports; a port with node NULL means "ones") are the initial gradients of
 * the ys, tensors of g with the ys' shapes. New nodes are named under
 * `prefix` ("gradients" when NULL or ""), made unique. Gradients of a tensor
 * reaching several consumers are summed with AddN; StopGradient blocks
 * them; an op on the path without a gradient function fails (DFX_EUNIMPL,
 * naming the node and op), and a PreventGradient node on the path fails
 * with DFX_EINVAL naming it. Borrows g and every array; g is only read. On
 * success *out is new and dx[i] (the caller's array of n_xs pointers)
 * receives a new "node:k" string naming x[i]'s gradient (free each with
 * dfx_free), or NULL when x[i] does not reach any y through differentiable
 * (float) tensors, as TF reports None. On error *out and every dx[i] are
 * NULL. Also DFX_EINVAL/DFX_ENOTFOUND for bad ports, DFX_ENOMEM.
 * Thread-safe. */
DFX_API dfx_code dfx_graph_gradients(const dfx_graph *g, const dfx_port *ys, int n_ys, const dfx_port *xs, int n_xs,
                                     const dfx_port *grad_ys, const char *prefix, dfx_graph **out, char **dx,
                                     dfx_status *st);

/* ---- sessions ------------------------------------------------------------ */

typedef struct dfx_session dfx_session;

typedef struct dfx_session_options {
  int n_threads;     /* worker threads; 0 = number of cores */
  int inline_only;   /* 1: run every kernel on the calling thread */
  /* Graph optimisation before each run signature is planned (the session
   * runs an optimised copy; the graph itself is not changed): NULL or
   * "default" for the default pipeline, "none" for none, or a comma-
   * separated list of passes (dfx_optimize_pass lists them). Borrowed for
   * the call; an unknown pass fails dfx_session_new with DFX_EINVAL. When
   * NULL, the environment variable DFX_OPTIMIZE, if set, gives the list
   * (so a program's optimisation can be switched off without rebuilding). */
  const char *optimize;
} dfx_session_options;

/* Per-run options. Zero-initialise and set what is needed. */
typedef struct dfx_run_options {
  double timeout_sec;      /* > 0: fail with DFX_EDEADLINE after this long */
  int64_t max_iterations;  /* > 0: a loop frame may run at most this many iterations */
  /* If set, receives one call per node execution (from worker threads, so
   * it must be thread-safe): the node's name and op (borrowed, valid during
   * the call; with optimisation on, a node the optimiser made, such as a
   * folded constant, has a name the graph does not), frame name, iteration,
   * start and end times in nanoseconds since the run began, worker id. A
   * traced run schedules every node instance, including those an untraced
   * run settles without the scheduler (Const, Identity, Switch, Merge, dead
   * Exits), so it is slower. */
  void (*trace)(void *ud, const char *node, const char *op, const char *frame, int64_t iter, int64_t t0_ns,
                int64_t t1_ns, int worker);
  void *trace_ud;
} dfx_run_options;

/* Borrows `g`, which must outlive the session. `opts` may be NULL. Kernels
 * are looked up as TensorFlow does: per run signature, for the nodes that
 * signature needs after pruning, once, when it is first run. A node with no
 * kernel for its op or dtypes therefore fails the first dfx_session_run
 * that needs it (DFX_EUNIMPL, naming the node, the dtypes that have a
 * kernel and the chain from the fetch), never a run that does not. On
 * success *out is new. */
DFX_API dfx_code dfx_session_new(const dfx_graph *g, const dfx_session_options *opts,
                                 dfx_session **out, dfx_status *st);
/* Waits for nothing: the caller must not free a session with runs going. */
DFX_API void dfx_session_free(dfx_session *s);

/* Runs one step and blocks until it ends. Only the nodes needed by the
 * fetches and targets run; a fed tensor replaces its producer. The first
 * run of a (feeds, fetches, targets) signature builds its plan and
 * initialises its kernels (DFX_EUNIMPL when one is missing, see
 * dfx_session_new). Borrows every array and feed tensor. On DFX_OK each
 * fetch_vals[i] is a new tensor owned by the caller; on error all are NULL. Several threads may call this on the
 * same session at once; each call is an independent step. `ro` may be NULL. */
DFX_API dfx_code dfx_session_run(dfx_session *s, const dfx_run_options *ro,
                                 const dfx_port *feeds, dfx_tensor *const *feed_vals, int n_feeds,
                                 const dfx_port *fetches, dfx_tensor **fetch_vals, int n_fetches,
                                 const char *const *targets, int n_targets, dfx_status *st);

/* Asks every run in progress on `s` to stop; they return DFX_ECANCELED.
 * Safe to call from any thread. */
DFX_API void dfx_session_cancel(dfx_session *s);

/* ---- graph builder ------------------------------------------------------ */

/* A graph under construction. Nodes are added one at a time, with inputs
 * written as TensorFlow input strings ("node", "node:k", "^node"); nothing is
 * checked against op signatures until dfx_builder_to_graph or
 * dfx_builder_serialize, which finalise a copy of the nodes with the checks
 * dfx_graph_import makes (so its validation, messages and attr defaults
 * apply).
 *
 * Conveniences over a raw GraphDef:
 *  - A missing type attr (such as "T" of Add, or "Tidx" of Sum) is inferred
 *    at finalisation from the producer of the first input that uses it; the
 *    op's default for it applies only when no input determines it. A
 *    missing list length (such as "N" of Merge or AddN) comes from the
 *    number of inputs.
 *  - Names are scoped: while a scope "s" is open (dfx_builder_scope_push,
 *    or inside the while/cond helpers) a node named "x" is called "s/x".
 *    A NULL name picks a fresh one from the op ("Add", "Add_1", ...).
 *  - Inside dfx_builder_while and dfx_builder_cond callbacks the builder
 *    keeps TensorFlow 1's frame rules itself, as tf.while_loop and tf.cond
 *    do: a data input from outside the loop goes through a constant Enter
 *    (outside a cond branch: through a Switch on the predicate), created
 *    once per tensor and loop; and a node with no inputs (a Const, say) gets
 *    a control input from the current pivot so it runs in the right frame
 *    and branch.
 *
 * Errors are sticky: the first failure of any builder call is remembered
 * and reported again by dfx_builder_to_graph / dfx_builder_serialize, so a
 * program may check only those. A builder is not thread-safe: use it from
 * one thread at a time. Graphs it makes are independent of it. */
typedef struct dfx_builder dfx_builder;
/* A node of a builder, borrowed from it: valid until dfx_builder_free,
 * however many nodes are added after it. */
typedef struct dfx_bnode dfx_bnode;

/* Returns new empty builder, or NULL when out of memory. */
DFX_API dfx_builder *dfx_builder_new(void);
/* Takes `b` and frees it with every node, name and string it handed out. */
DFX_API void dfx_builder_free(dfx_builder *b);
/* Number of nodes so far (helpers' nodes included); 0 for NULL. */
DFX_API int dfx_builder_node_count(const dfx_builder *b);

/* Adds a node. Borrows every string (they are copied). `name` is relative to
 * the open scope, or NULL for a fresh name from `op`. `inputs` holds
 * n_inputs input strings; control inputs ("^x") may be mixed in anywhere
 * and are stored after the data inputs, as TensorFlow requires. Inputs may
 * name nodes not added yet (a back edge to a NextIteration, say); such
 * names are resolved at finalisation, which fails ("Unknown input node")
 * for one still missing then. On success *out (when `out` is not NULL) is
 * the new node, borrowed from `b`. Returns DFX_EINVAL for a NULL or empty
 * argument, a name already in use, a name with ':' or '^' or one
 * TensorFlow's name rule refuses ([A-Za-z0-9._][A-Za-z0-9_./>-]*), and
 * DFX_EINVAL when an input crosses control-flow contexts illegally (a value
 * from inside a loop used outside it, or from the other cond branch).
 * DFX_ENOMEM when out of memory. */
DFX_API dfx_code dfx_builder_node(dfx_builder *b, const char *op, const char *name,
                                  const char *const *inputs, int n_inputs, dfx_bnode **out,
                                  dfx_status *st);
/* The node with this full name, borrowed, or NULL. */
DFX_API dfx_bnode *dfx_builder_find(const dfx_builder *b, const char *name);

/* Full (scoped) node name, borrowed from the builder; "" for NULL. */
DFX_API const char *dfx_bnode_name(const dfx_bnode *n);
/* Output k as "name:k" (plain "name" for k == 0), borrowed from the builder
 * and valid until it is freed; NULL for a NULL node, k < 0 or no memory. */
DFX_API const char *dfx_bnode_output(dfx_bnode *n, int k);
/* Appends an input string (borrowed, copied) with the same rules as
 * dfx_builder_node, in the node's own control-flow context. */
DFX_API dfx_code dfx_bnode_add_input(dfx_bnode *n, const char *input);
/* Sets the node's device string (borrowed, copied); dfexec ignores it but
 * keeps it in serialised graphs. */
DFX_API dfx_code dfx_bnode_set_device(dfx_bnode *n, const char *device);

/* Attr setters. Each borrows its arguments (they are copied) and replaces an
 * attr of the same name. They return DFX_OK, DFX_EINVAL for a NULL node or
 * name, a negative count, an invalid dtype or a shape with a dimension
 * below -1, or DFX_ENOMEM. They take no status argument, to keep builder
 * code to one line per attr: the message of a failure goes to the builder's
 * sticky error and is reported at finalisation. */
DFX_API dfx_code dfx_bnode_attr_int(dfx_bnode *n, const char *name, int64_t v);
DFX_API dfx_code dfx_bnode_attr_float(dfx_bnode *n, const char *name, float v);
DFX_API dfx_code dfx_bnode_attr_bool(dfx_bnode *n, const char *name, int v);
/* A NUL-terminated string; use dfx_bnode_attr_bytes for binary data. */
DFX_API dfx_code dfx_bnode_attr_string(dfx_bnode *n, const char *name, const char *v);
DFX_API dfx_code dfx_bnode_attr_bytes(dfx_bnode *n, const char *name, const void *v, size_t len);
DFX_API dfx_code dfx_bnode_attr_type(dfx_bnode *n, const char *name, dfx_dtype v);
/* rank -1 is an unknown shape (dims may then be NULL); a dim of -1 is unknown. */
DFX_API dfx_code dfx_bnode_attr_shape(dfx_bnode *n, const char *name, const int64_t *dims, int rank);
/* Copies the tensor's dtype, shape and elements (string tensors too). */
DFX_API dfx_code dfx_bnode_attr_tensor(dfx_bnode *n, const char *name, const dfx_tensor *v);
DFX_API dfx_code dfx_bnode_attr_ints(dfx_bnode *n, const char *name, const int64_t *v, int count);
DFX_API dfx_code dfx_bnode_attr_floats(dfx_bnode *n, const char *name, const float *v, int count);
DFX_API dfx_code dfx_bnode_attr_types(dfx_bnode *n, const char *name, const dfx_dtype *v, int count);

/* Adds a Placeholder with attrs dtype and shape (rank -1: unknown shape).
 * Borrows `name` and `dims`; *out as for dfx_builder_node. */
DFX_API dfx_code dfx_builder_placeholder(dfx_builder *b, const char *name, dfx_dtype dtype,
                                         const int64_t *dims, int rank, dfx_bnode **out, dfx_status *st);
/* Adds a Const holding a copy of `value` (borrowed). Inside a loop or cond
 * callback it gets the pivot control input described above. */
DFX_API dfx_code dfx_builder_const(dfx_builder *b, const char *name, const dfx_tensor *value,
                                   dfx_bnode **out, dfx_status *st);
/* Scalar Const shorthands. */
DFX_API dfx_code dfx_builder_const_i32(dfx_builder *b, const char *name, int32_t v, dfx_bnode **out,
                                       dfx_status *st);
DFX_API dfx_code dfx_builder_const_i64(dfx_builder *b, const char *name, int64_t v, dfx_bnode **out,
                                       dfx_status *st);
DFX_API dfx_code dfx_builder_const_f32(dfx_builder *b, const char *name, float v, dfx_bnode **out,
                                       dfx_status *st);
DFX_API dfx_code dfx_builder_const_f64(dfx_builder *b, const char *name, double v, dfx_bnode **out,
                                       dfx_status *st);
DFX_API dfx_code dfx_builder_const_bool(dfx_builder *b, const char *name, int v, dfx_bnode **out,
                                        dfx_status *st);

/* Opens a name scope "name/" inside the current one (borrows `name`).
 * Returns DFX_EINVAL for a NULL/empty name or one with '/', ':' or '^'. */
DFX_API dfx_code dfx_builder_scope_push(dfx_builder *b, const char *name, dfx_status *st);
/* Closes the innermost scope opened by dfx_builder_scope_push; DFX_EINVAL
 * when there is none (helpers' scopes cannot be closed from a callback). */
DFX_API dfx_code dfx_builder_scope_pop(dfx_builder *b, dfx_status *st);
/* The current name scope: the prefix a node name gets, "" at the root or
 * "a/b/" (inside a while/cond callback, the helper's scope, "while/").
 * Borrowed from the builder, valid until its next call; "" for NULL. */
DFX_API const char *dfx_builder_scope(const dfx_builder *b);
/* The control pivot of the current context: the node every input-less node
 * created now is made to depend on ("while/Identity" in a loop body,
 * "while/Merge" in a loop condition, "cond/switch_t" in a true branch).
 * Borrowed; NULL outside any loop or cond. Use it as "^" + name for a
 * control input made by hand. */
DFX_API const char *dfx_builder_pivot(const dfx_builder *b);

/* Loop callbacks for dfx_builder_while. `vars` holds the n loop-variable
 * tensors inside the loop (borrowed, valid during the call): the Merge
 * outputs for the condition and the Identity outputs for the body, as in
 * tf.while_loop. `cond` stores the name of a scalar bool tensor in *pred;
 * `body` stores the n new values in next[0 .. n-1]. The names stored must
 * stay valid until the callback returns: names from dfx_bnode_name or
 * dfx_bnode_output, `vars` themselves, or static strings. Return DFX_OK, or
 * an error to abandon the loop (dfx_builder_while then returns it). */
typedef dfx_code (*dfx_while_cond_fn)(dfx_builder *b, const char *const *vars, int n, void *ud,
                                      const char **pred);
typedef dfx_code (*dfx_while_body_fn)(dfx_builder *b, const char *const *vars, int n, void *ud,
                                      const char **next);

/* Emits TensorFlow 1's lowering of a while loop over the n tensors
 * `loop_vars` (borrowed): per variable Enter, Merge, Switch, Identity,
 * NextIteration and Exit, one LoopCond, all in scope `name` (NULL: "while";
 * made unique like node names) with frame name "<scope>/while_context" and
 * the given parallel_iterations (<= 0: 10). `cond` and `body` are called
 * once each, in that order, with `ud`; see dfx_while_cond_fn for what they
 * get. The loop variables may come from any enclosing context. On DFX_OK
 * exits[0 .. n-1] receive the Exit node names (borrowed from the builder),
 * the loop's results. Loops nest: a callback may call dfx_builder_while or
 * dfx_builder_cond. Returns DFX_EINVAL for bad arguments, what a callback
 * returned, or a code from adding the nodes. */
DFX_API dfx_code dfx_builder_while(dfx_builder *b, const char *name, const char *const *loop_vars, int n,
                                   int parallel_iterations, dfx_while_cond_fn cond, dfx_while_body_fn body,
                                   void *ud, const char **exits, dfx_status *st);

/* Branch callback for dfx_builder_cond: stores n_out result names in
 * outs[0 .. n_out-1] (same lifetime rule as the loop callbacks). A result
 * may be a tensor from outside the branch; it is switched in. */
typedef dfx_code (*dfx_cond_branch_fn)(dfx_builder *b, void *ud, const char **outs);

/* Emits tf.cond's lowering for the scalar bool tensor `pred` (borrowed): in
 * scope `name` (NULL: "cond") a Switch(pred, pred) with the pivots
 * switch_t / switch_f, pred_id = Identity(pred), the two branches built by
 * `then_fn` and `else_fn` (each called once, in that order) and one
 * Merge(else, then) per result. On DFX_OK outs[0 .. n_out-1] receive the
 * Merge node names (borrowed). Only the taken branch runs; the other one's
 * tensors are dead. n_out must be >= 1. Codes as for dfx_builder_while. */
DFX_API dfx_code dfx_builder_cond(dfx_builder *b, const char *name, const char *pred, int n_out,
                                  dfx_cond_branch_fn then_fn, dfx_cond_branch_fn else_fn, void *ud,
                                  const char **outs, dfx_status *st);

/* Finalises a copy of the nodes: resolves inputs that named nodes added
 * later, infers missing type and length attrs (on the copy: the builder's
 * nodes keep what was set), fills attr defaults and checks the graph
 * exactly as dfx_graph_import would. The builder is left as it was: it may
 * grow and be finalised again, and the graph does not depend on it. On
 * success *out is new. Returns the builder's sticky error if it has one,
 * otherwise the importer's code (DFX_EINVAL for bad inputs or attrs, ...),
 * or DFX_ENOMEM. */
DFX_API dfx_code dfx_builder_to_graph(dfx_builder *b, dfx_graph **out, dfx_status *st);
/* Makes the graph dfx_builder_to_graph would and writes it as
 * dfx_graph_serialize does (inferred attrs and defaults included), as binary
 * protobuf (text == 0) or TensorFlow's text format (text != 0). On success
 * *buf is new (free it with dfx_free; text is NUL-terminated) and *len its
 * length in bytes without any terminator. Same codes. */
DFX_API dfx_code dfx_builder_serialize(dfx_builder *b, int text, void **buf, size_t *len, dfx_status *st);
/* dfx_builder_serialize into the file `path` (borrowed): text format for
 * names ending in ".pbtxt" or ".txt", binary otherwise. DFX_EIO when the
 * file cannot be written. */
DFX_API dfx_code dfx_builder_save(dfx_builder *b, const char *path, dfx_status *st);

/* ---- variables and checkpoints ------------------------------------------ */

/* Variables live in their session: every run of one session sees the same
 * values, other sessions (even on the same graph) have their own. A
 * variable is named by its resource name: a VariableV2's shared_name or
 * node name, a VarHandleOp's shared_name or node name (container ""). TF1
 * ref variables read as the value when their VariableV2 node runs in a
 * step (TF reads at each consumer; use an Assign's output to see a value
 * just written). Checkpoints are TensorFlow's V2 format (the "tensor
 * bundle": PREFIX.index + PREFIX.data-00000-of-00001), read and written
 * with every checksum checked; partitioned variables are not supported. */

/* The value of the session's variable `name` (container "" / "localhost"):
 * on DFX_OK *out is a new tensor owned by the caller (a snapshot).
 * DFX_ENOTFOUND when no run has made the variable and nothing restored it,
 * DFX_EPRECOND when it has no value yet. Thread-safe against runs. */
DFX_API dfx_code dfx_session_variable_read(dfx_session *s, const char *name, dfx_tensor **out, dfx_status *st);
/* Sets the variable `name` to a copy of `value` (borrowed), creating the
 * variable when the session has none by that name (a later VariableV2 or
 * VarHandleOp of that name and dtype finds it). DFX_EINVAL when the
 * variable's dtype differs. Thread-safe against runs. */
DFX_API dfx_code dfx_session_variable_assign(dfx_session *s, const char *name, const dfx_tensor *value,
                                             dfx_status *st);
/* Number of variables the session holds, and the name of variable i
 * (borrowed, valid for the session's life), in creation order. */
DFX_API int dfx_session_variable_count(dfx_session *s);
DFX_API const char *dfx_session_variable_name(dfx_session *s, int i);

/* Saves every initialised variable of the session, under its name, as the
 * checkpoint PREFIX (borrowed; the directory must exist). Uninitialised
 * variables are skipped. The files appear only when complete. DFX_EIO,
 * DFX_ENOMEM, DFX_EUNIMPL (a variable holding a resource or variant). */
DFX_API dfx_code dfx_session_save(dfx_session *s, const char *prefix, dfx_status *st);
/* Restores variables from the checkpoint PREFIX: tensor tensor_names[i]
 * into the variable var_names[i] (var_names NULL: the same names), or,
 * with n == 0, every tensor of the checkpoint into the variable of its
 * name. Variables that do not exist yet are created. Nothing is assigned
 * unless every tensor reads back whole. DFX_ENOTFOUND (no checkpoint, a
 * missing tensor or shard, each named), DFX_EINVAL (corrupt files,
 * a dtype that differs from the variable's). */
DFX_API dfx_code dfx_session_restore(dfx_session *s, const char *prefix, const char *const *tensor_names,
                                     const char *const *var_names, int n, dfx_status *st);

/* An open checkpoint: its tensor list, read once at open. */
typedef struct dfx_checkpoint dfx_checkpoint;
/* Opens PREFIX (borrowed). On success *out is new. DFX_ENOTFOUND (no
 * PREFIX.index, or a data shard missing, named), DFX_EINVAL (corrupt
 * index), DFX_EUNIMPL (compressed or big-endian files). */
DFX_API dfx_code dfx_checkpoint_open(const char *prefix, dfx_checkpoint **out, dfx_status *st);
DFX_API void dfx_checkpoint_close(dfx_checkpoint *c);
/* Tensors in the checkpoint, sorted by name; for i in [0, count): its
 * name (borrowed, valid until close), dtype and shape (dims receives up to
 * DFX_MAX_DIMS values; returns the rank). */
DFX_API int dfx_checkpoint_count(const dfx_checkpoint *c);
DFX_API const char *dfx_checkpoint_name(const dfx_checkpoint *c, int i);
DFX_API dfx_dtype dfx_checkpoint_dtype(const dfx_checkpoint *c, int i);
DFX_API int dfx_checkpoint_shape(const dfx_checkpoint *c, int i, int64_t *dims);
/* Reads tensor `name`: on DFX_OK *out is new. DFX_ENOTFOUND for an unknown
 * name; DFX_EINVAL when the data is truncated or fails its checksum (the
 * message names the shard file and the tensor). */
DFX_API dfx_code dfx_checkpoint_read(const dfx_checkpoint *c, const char *name, dfx_tensor **out, dfx_status *st);
/* Writes n tensors (borrowed) under names (borrowed) as the checkpoint
 * PREFIX. DFX_EINVAL for a repeated or empty name. */
DFX_API dfx_code dfx_checkpoint_write(const char *prefix, const char *const *names, dfx_tensor *const *values, int n,
                                      dfx_status *st);

/* A TF1 MetaGraphDef (a `.meta` file): the graph plus its saver's names,
 * tags and signatures. */
typedef struct dfx_metagraph dfx_metagraph;
/* Parses a binary MetaGraphDef (buf borrowed) / reads one from `path`. On
 * success *out is new (dfx_metagraph_free). The graph import's codes, or
 * DFX_EINVAL for bytes that are not a MetaGraphDef. */
DFX_API dfx_code dfx_metagraph_import(const void *buf, size_t len, dfx_metagraph **out, dfx_status *st);
DFX_API dfx_code dfx_metagraph_load(const char *path, dfx_metagraph **out, dfx_status *st);
DFX_API void dfx_metagraph_free(dfx_metagraph *m);
/* The graph, borrowed: valid until dfx_metagraph_free, which must wait for
 * every session on it to be freed. */
DFX_API const dfx_graph *dfx_metagraph_graph(const dfx_metagraph *m);
/* The SaverDef's names (borrowed; NULL when the MetaGraphDef has none):
 * the string tensor to feed the checkpoint prefix ("save/Const:0"), the
 * tensor to fetch to save ("save/control_dependency:0") and the op to run
 * to restore ("save/restore_all"). */
DFX_API const char *dfx_metagraph_saver_filename_tensor(const dfx_metagraph *m);
DFX_API const char *dfx_metagraph_saver_save_tensor(const dfx_metagraph *m);
DFX_API const char *dfx_metagraph_saver_restore_op(const dfx_metagraph *m);
/* The meta_info_def tags ("serve"), i in [0, count). */
DFX_API int dfx_metagraph_tag_count(const dfx_metagraph *m);
DFX_API const char *dfx_metagraph_tag(const dfx_metagraph *m, int i);
/* The signature_def map, sorted by key: count, key i ("serving_default"),
 * the index of a key (-1 when absent), and its tensors: n_inputs /
 * n_outputs, then for tensor j of the inputs (output 0) or outputs
 * (output 1) its map key, graph tensor name ("x:0"), dtype and shape
 * (rank -1 when unknown; dims borrowed, -1 for an unknown dim). Strings are
 * borrowed until dfx_metagraph_free. DFX_ERANGE for a bad index. */
DFX_API int dfx_metagraph_signature_count(const dfx_metagraph *m);
DFX_API const char *dfx_metagraph_signature_key(const dfx_metagraph *m, int i);
DFX_API int dfx_metagraph_signature_find(const dfx_metagraph *m, const char *key);
DFX_API int dfx_metagraph_signature_size(const dfx_metagraph *m, int i, int output);
DFX_API dfx_code dfx_metagraph_signature_tensor(const dfx_metagraph *m, int i, int output, int j, const char **key,
                                                const char **tensor, dfx_dtype *dtype, int *ndims,
                                                const int64_t **dims, dfx_status *st);
/* TF's Saver.restore / Saver.save on a session of m's graph: runs the
 * restore op (or fetches the save tensor) with the filename tensor fed
 * PREFIX. DFX_EINVAL when m has no SaverDef; otherwise the run's codes. */
DFX_API dfx_code dfx_metagraph_restore(const dfx_metagraph *m, dfx_session *s, const char *prefix, dfx_status *st);
DFX_API dfx_code dfx_metagraph_save(const dfx_metagraph *m, dfx_session *s, const char *prefix, dfx_status *st);

#ifdef __cplusplus
}
#endif
#endif /* DFEXEC_H */
