/* load_run.c - load a frozen TensorFlow 1.x graph, feed its placeholders
 * from the command line, run it and print the fetched tensors.
 *
 *   load_run GRAPH [FETCH] [NAME=v1,v2,...[@d0xd1...]] ...
 *
 * GRAPH is a .pb or .pbtxt GraphDef, FETCH a tensor ("node" or "node:k");
 * without one it fetches the graph's outputs (dfx_graph_outputs).
 * Each feed gives a placeholder's values; the element type comes from the
 * placeholder and the shape from "@2x3", else from the placeholder when it
 * is fully known, else a vector of the values given ("@" alone: a scalar).
 * Without any feeds it first lists the graph's placeholders.
 * Uses only dfexec.h, so it builds out of tree with
 *   cc load_run.c $(pkg-config --cflags --libs dfexec) */
#include <dfexec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, dfx_code c, const dfx_status *st) {
  fprintf(stderr, "load_run: %s: %s: %s\n", what, dfx_code_name(c), dfx_status_message(st));
  return 1;
}

/* Parses "v1,v2,...[@d0xd1]" as a tensor of `ph`'s dtype. NULL on error. */
static dfx_tensor *parse_feed(const dfx_placeholder *ph, char *spec) {
  int64_t dims[DFX_MAX_DIMS];
  int ndims = -1;
  char *at = strchr(spec, '@');
  if (at) {
    *at++ = 0;
    ndims = 0;
    for (char *s = at; *s && ndims < DFX_MAX_DIMS; s += strspn(s, "x")) dims[ndims++] = strtoll(s, &s, 10);
  }
  double vals[4096];
  int n = 0;
  for (char *s = spec, *end; *s && n < 4096; s = *end ? end + 1 : end) {
    vals[n++] = strtod(s, &end);
    if (end == s) return NULL;
  }
  if (ndims < 0 && ph->rank >= 0) {
    int64_t count = 1;
    for (int i = 0; i < ph->rank; i++) count = ph->dims[i] < 0 ? -1 : count * ph->dims[i];
    if (count == n) {
      ndims = ph->rank;
      for (int i = 0; i < ndims; i++) dims[i] = ph->dims[i];
    }
  }
  if (ndims < 0) {
    ndims = 1;
    dims[0] = n;
  }
  dfx_tensor *t = dfx_tensor_new(ph->dtype, dims, ndims);
  if (!t || dfx_tensor_count(t) != n) {
    dfx_tensor_free(t);
    return NULL;
  }
  void *d = dfx_tensor_data(t);
  for (int i = 0; i < n; i++) {
    switch (ph->dtype) {
      case DFX_F32: ((float *)d)[i] = (float)vals[i]; break;
      case DFX_F64: ((double *)d)[i] = vals[i]; break;
      case DFX_I32: ((int32_t *)d)[i] = (int32_t)vals[i]; break;
      case DFX_I64: ((int64_t *)d)[i] = (int64_t)vals[i]; break;
      case DFX_BOOL: ((uint8_t *)d)[i] = vals[i] != 0; break;
      default: dfx_tensor_free(t); return NULL;
    }
  }
  return t;
}

static void print_tensor(const char *name, const dfx_tensor *t) {
  printf("%s: %s [", name, dfx_dtype_name(dfx_tensor_dtype(t)));
  for (int i = 0; i < dfx_tensor_ndims(t); i++) printf("%s%lld", i ? "," : "", (long long)dfx_tensor_dim(t, i));
  printf("] =");
  const void *d = dfx_tensor_data(t);
  for (int64_t i = 0; i < dfx_tensor_count(t); i++) {
    switch (dfx_tensor_dtype(t)) {
      case DFX_F32: printf(" %.9g", ((const float *)d)[i]); break;
      case DFX_F64: printf(" %.17g", ((const double *)d)[i]); break;
      case DFX_I32: printf(" %d", ((const int32_t *)d)[i]); break;
      case DFX_I64: printf(" %lld", (long long)((const int64_t *)d)[i]); break;
      case DFX_BOOL: printf(" %s", ((const uint8_t *)d)[i] ? "true" : "false"); break;
      default: printf(" ?"); break;
    }
  }
  printf("\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s GRAPH [FETCH] [NAME=v1,v2,...[@d0xd1]] ...  (dfexec %s)\n", argv[0], dfx_version());
    return 2;
  }
  int rc = 1, n_feeds = 0, n_fetches = 0;
  dfx_status *st = dfx_status_new();
  dfx_graph *g = NULL;
  dfx_session *s = NULL;
  dfx_placeholder *phs = NULL;
  dfx_port feeds[64], *fetches = NULL;
  dfx_tensor *vals[64], **outs = NULL;
  char names[64][256], fetch_buf[256];
  dfx_code c = dfx_graph_load(argv[1], &g, st);
  if (c != DFX_OK) {
    rc = fail(argv[1], c, st);
    goto done;
  }
  /* The fetch is optional: an argument with '=' is already a feed. */
  int first_feed = argc > 2 && !strchr(argv[2], '=') ? 3 : 2;
  if (first_feed == 3) {
    if (!(fetches = calloc(1, sizeof *fetches))) goto done;
    if ((c = dfx_port_parse(argv[2], fetch_buf, sizeof fetch_buf, &fetches[0], st)) != DFX_OK) {
      rc = fail(argv[2], c, st);
      goto done;
    }
    n_fetches = 1;
  } else {
    n_fetches = dfx_graph_outputs(g, NULL, 0);
    if (n_fetches < 0 || !(fetches = calloc((size_t)n_fetches + 1, sizeof *fetches))) goto done;
    dfx_graph_outputs(g, fetches, n_fetches);
  }
  int n_ph = dfx_graph_placeholders(g, NULL, 0);
  phs = calloc((size_t)n_ph + 1, sizeof *phs);
  if (!phs) goto done;
  dfx_graph_placeholders(g, phs, n_ph);
  for (int a = first_feed; a < argc && n_feeds < 64; a++) {
    char *eq = strchr(argv[a], '=');
    if (!eq) {
      fprintf(stderr, "load_run: feed '%s' is not NAME=VALUES\n", argv[a]);
      goto done;
    }
    *eq = 0;
    if ((c = dfx_port_parse(argv[a], names[n_feeds], sizeof names[0], &feeds[n_feeds], st)) != DFX_OK) {
      rc = fail(argv[a], c, st);
      goto done;
    }
    const dfx_placeholder *ph = NULL;
    for (int k = 0; k < n_ph; k++)
      if (strcmp(phs[k].name, feeds[n_feeds].node) == 0) ph = &phs[k];
    if (!ph) {
      fprintf(stderr, "load_run: '%s' is not a placeholder of the graph\n", argv[a]);
      goto done;
    }
    if (!(vals[n_feeds] = parse_feed(ph, eq + 1))) {
      fprintf(stderr, "load_run: cannot parse the values for '%s'\n", argv[a]);
      goto done;
    }
    n_feeds++;
  }
  if (n_feeds == 0 && n_ph > 0) {
    for (int k = 0; k < n_ph; k++) {
      printf("placeholder %s: %s rank %d%s\n", phs[k].name, dfx_dtype_name(phs[k].dtype), phs[k].rank,
             phs[k].has_default ? " (optional)" : "");
    }
  }
  dfx_session_options so = {.n_threads = 2};
  if ((c = dfx_session_new(g, &so, &s, st)) != DFX_OK) {
    rc = fail("session", c, st);
    goto done;
  }
  if (!(outs = calloc((size_t)n_fetches + 1, sizeof *outs))) goto done;
  c = dfx_session_run(s, NULL, feeds, vals, n_feeds, fetches, outs, n_fetches, NULL, 0, st);
  if (c != DFX_OK) {
    rc = fail("run", c, st);
    goto done;
  }
  for (int i = 0; i < n_fetches; i++) {
    char name[300];
    /* The name as given, or "node:k" for the graph's own outputs. */
    if (first_feed == 3) snprintf(name, sizeof name, "%s", argv[2]);
    else snprintf(name, sizeof name, "%s:%d", fetches[i].node, fetches[i].index);
    print_tensor(name, outs[i]);
  }
  rc = 0;
done:
  for (int i = 0; outs && i < n_fetches; i++) dfx_tensor_free(outs[i]);
  free(outs);
  free(fetches);
  for (int i = 0; i < n_feeds; i++) dfx_tensor_free(vals[i]);
  free(phs);
  dfx_session_free(s);
  dfx_graph_free(g);
  dfx_status_free(st);
  return rc;
}
