/* gcheck.c - the numeric gradient checker (gcheck.h). */
#include "gcheck.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic values: a 64-bit LCG, so a failing case reruns the same. */
static double rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) / 9007199254740992.0;
}

static char *subst(const char *body, const char *tname) {
  size_t n = strlen(body) * 2 + 64, o = 0;
  char *out = malloc(n);
  for (const char *p = body; *p; p++) {
    if (p[0] == '$' && p[1] == 'T') {
      o += (size_t)snprintf(out + o, n - o, "%s", tname);
      p++;
    } else {
      out[o++] = *p;
    }
    if (o + 32 > n) out = realloc(out, n *= 2);
  }
  out[o] = 0;
  return out;
}

static double get(const dfx_tensor *t, int64_t i) {
  return dfx_tensor_dtype(t) == DFX_F64 ? ((double *)dfx_tensor_data(t))[i] : ((float *)dfx_tensor_data(t))[i];
}
static void set(dfx_tensor *t, int64_t i, double v) {
  if (dfx_tensor_dtype(t) == DFX_F64)
    ((double *)dfx_tensor_data(t))[i] = v;
  else if (dfx_tensor_dtype(t) == DFX_F32)
    ((float *)dfx_tensor_data(t))[i] = (float)v;
  else
    ((int32_t *)dfx_tensor_data(t))[i] = (int32_t)v;
}

typedef struct ctx {
  dfx_session *s;
  dfx_port feeds[6];
  dfx_tensor *vals[6];
  int n_feeds;           /* inputs, then gy */
  dfx_port y;
  dfx_status *st;
} ctx;

/* sum(gy * y) at the current inputs. */
static bool loss(ctx *c, const dfx_tensor *gy, double *out) {
  dfx_tensor *y = NULL;
  if (dfx_session_run(c->s, NULL, c->feeds, c->vals, c->n_feeds - 1, &c->y, &y, 1, NULL, 0, c->st) != DFX_OK)
    return false;
  double acc = 0;
  for (int64_t i = 0; i < dfx_tensor_count(y); i++) acc += get(y, i) * get(gy, i);
  dfx_tensor_free(y);
  *out = acc;
  return true;
}

bool gc_check(const gc_case *k, dfx_dtype t, char *msg, size_t mn) {
  const char *tname = t == DFX_F64 ? "DT_DOUBLE" : "DT_FLOAT";
  double h = t == DFX_F64 ? 1e-6 : 1e-3, tol = k->tol ? k->tol : t == DFX_F64 ? 1e-6 : 2e-2;
  bool ok = false;
  char *text = NULL, *body = subst(k->body, tname);
  size_t tn = strlen(body) + 4096;
  text = malloc(tn);
  size_t o = 0;
  for (int i = 0; i < k->n_in; i++)
    o += (size_t)snprintf(text + o, tn - o, "node { name: \"%s\" op: \"Placeholder\" attr { key: \"dtype\" value { type: %s } } }\n",
                          k->in[i].name, k->in[i].as_int ? "DT_INT32" : tname);
  o += (size_t)snprintf(text + o, tn - o, "node { name: \"gy\" op: \"Placeholder\" attr { key: \"dtype\" value { type: %s } } }\n%s",
                        tname, body);
  ctx c = {.st = dfx_status_new()};
  dfx_graph *g = NULL, *gg = NULL;
  char *dx[4] = {0};
  dfx_tensor *gy = NULL, *dxv[4] = {0};
  dfx_port xs[4];
  int xi[4], n_xs = 0;
  const char *colon = strchr(k->y, ':');
  char yname[128];
  snprintf(yname, sizeof yname, "%.*s", colon ? (int)(colon - k->y) : (int)strlen(k->y), k->y);
  c.y = (dfx_port){yname, colon ? atoi(colon + 1) : 0};
  uint64_t seed = 12345;
  for (int i = 0; i < k->n_in; i++) {
    const gc_in *in = &k->in[i];
    c.feeds[i] = (dfx_port){in->name, 0};
    c.vals[i] = dfx_tensor_new(in->as_int ? DFX_I32 : t, in->dims, in->rank);
    double lo = in->lo, hi = in->hi;
    if (lo == 0 && hi == 0) lo = -1, hi = 1;
    for (int64_t j = 0; j < dfx_tensor_count(c.vals[i]); j++)
      set(c.vals[i], j, in->as_int ? floor(lo + rnd(&seed) * (hi - lo + 1)) : lo + rnd(&seed) * (hi - lo));
    if (!in->no_grad && !in->as_int) xi[n_xs] = i, xs[n_xs++] = (dfx_port){in->name, 0};
  }
  c.n_feeds = k->n_in + 1;
  if (dfx_graph_import(text, strlen(text), &g, c.st) != DFX_OK) {
    snprintf(msg, mn, "%s: import: %s", k->label, dfx_status_message(c.st));
    goto done;
  }
  dfx_port gyp = {"gy", 0};
  if (dfx_graph_gradients(g, &c.y, 1, xs, n_xs, &gyp, NULL, &gg, dx, c.st) != DFX_OK) {
    snprintf(msg, mn, "%s: gradients: %s", k->label, dfx_status_message(c.st));
    goto done;
  }
  if (dfx_session_new(gg, NULL, &c.s, c.st) != DFX_OK) {
    snprintf(msg, mn, "%s: session: %s", k->label, dfx_status_message(c.st));
    goto done;
  }
  dfx_tensor *y0 = NULL;
  if (dfx_session_run(c.s, NULL, c.feeds, c.vals, k->n_in, &c.y, &y0, 1, NULL, 0, c.st) != DFX_OK) {
    snprintf(msg, mn, "%s: forward: %s", k->label, dfx_status_message(c.st));
    goto done;
  }
  int64_t ydims[8];
  for (int d = 0; d < dfx_tensor_ndims(y0); d++) ydims[d] = dfx_tensor_dim(y0, d);
  gy = dfx_tensor_new(t, ydims, dfx_tensor_ndims(y0));
  dfx_tensor_free(y0);
  for (int64_t j = 0; j < dfx_tensor_count(gy); j++) set(gy, j, -1 + 2 * rnd(&seed));
  c.feeds[k->n_in] = gyp;
  c.vals[k->n_in] = gy;
  /* the analytic gradients, in one run */
  dfx_port fetch[4];
  int map[4], n_fetch = 0;
  for (int i = 0; i < n_xs; i++) {
    map[i] = -1;
    if (!dx[i]) continue;
    static char names[4][256];
    const char *cl = strrchr(dx[i], ':');
    snprintf(names[i], sizeof names[i], "%.*s", (int)(cl - dx[i]), dx[i]);
    fetch[n_fetch] = (dfx_port){names[i], atoi(cl + 1)};
    map[i] = n_fetch++;
  }
  if (n_fetch && dfx_session_run(c.s, NULL, c.feeds, c.vals, c.n_feeds, fetch, dxv, n_fetch, NULL, 0, c.st) != DFX_OK) {
    snprintf(msg, mn, "%s: gradient run: %s", k->label, dfx_status_message(c.st));
    goto done;
  }
  for (int i = 0; i < n_xs; i++) {
    dfx_tensor *x = c.vals[xi[i]], *a = map[i] >= 0 ? dxv[map[i]] : NULL;
    if (a && (dfx_tensor_ndims(a) != dfx_tensor_ndims(x) || dfx_tensor_count(a) != dfx_tensor_count(x))) {
      snprintf(msg, mn, "%s: d/d%s has rank %d, %lld elements; x has rank %d, %lld", k->label, xs[i].node,
               dfx_tensor_ndims(a), (long long)dfx_tensor_count(a), dfx_tensor_ndims(x), (long long)dfx_tensor_count(x));
      goto done;
    }
    for (int64_t j = 0; j < dfx_tensor_count(x); j++) {
      double v = get(x, j), lp, lm;
      set(x, j, v + h);
      bool r1 = loss(&c, gy, &lp);
      set(x, j, v - h);
      bool r2 = loss(&c, gy, &lm);
      set(x, j, v);
      if (!r1 || !r2) {
        snprintf(msg, mn, "%s: perturbed forward: %s", k->label, dfx_status_message(c.st));
        goto done;
      }
      double num = (lp - lm) / (2 * h), an = a ? get(a, j) : 0;
      if (!(fabs(num - an) <= tol * (1 + fabs(num)))) {
        snprintf(msg, mn, "%s (%s): d/d%s[%lld]: gradient %.9g, numeric %.9g%s", k->label, dfx_dtype_name(t),
                 xs[i].node, (long long)j, an, num, a ? "" : " (reported unconnected)");
        goto done;
      }
    }
  }
  ok = true;
done:
  for (int i = 0; i < 4; i++) dfx_free(dx[i]), dfx_tensor_free(dxv[i]);
  for (int i = 0; i < k->n_in; i++) dfx_tensor_free(c.vals[i]);
  dfx_tensor_free(gy);
  dfx_session_free(c.s);
  dfx_graph_free(gg);
  dfx_graph_free(g);
  dfx_status_free(c.st);
  free(text);
  free(body);
  return ok;
}

int gc_check_all(const gc_case *cases, int n, const dfx_dtype *types, int n_types) {
  int bad = 0;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n_types; k++) {
      char msg[1024] = "";
      bool ok = gc_check(&cases[i], types[k], msg, sizeof msg);
      cr_expect(ok, "%s", msg);
      bad += !ok;
    }
  return bad;
}
