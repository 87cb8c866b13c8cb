/* manager.c - running a pipeline of passes (pass.h): parsing the list,
 * working out what must be kept, running each pass, finalising and
 * checking the graph after it, repeating the pipeline to a fixed point, and
 * recording what each pass did. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "alloc.h"
#include "invariant.h"
#include "op_registry.h"
#include "pass.h"

/* Pipeline order. Pruning first (less to look at); identities out before
 * common subexpressions are compared (so x and Identity(x) read alike);
 * statically known shapes become constants before folding, which then
 * folds what reads them; dead branches after it (a folded predicate is a
 * constant); arith (whose leftover Identities the next round's identity
 * pass takes); loop-invariant motion of what folding left (licm.c); then
 * CSE, again in the next round over what folding produced. Batch norms
 * fold into constant filters once folding made their parameters Consts,
 * zero Pads into the convolutions that read them, and what is left fuses
 * last. Before all of them, and whatever the list says (even "none"),
 * `lower` turns TensorFlow 2 functional ops and calls into v1 control flow
 * when a graph has any: nothing else can run them. */
static const dfx_pass *const all_passes[] = {
    &dfx__pass_lower,
    &dfx__pass_prune,
    &dfx__pass_identity,
    &dfx__pass_shapefold,
    &dfx__pass_constfold,
    &dfx__pass_deadbranch,
    &dfx__pass_arith,
    &dfx__pass_licm,
    &dfx__pass_cse,
    &dfx__pass_fold_batchnorm,
    &dfx__pass_fold_pad,
    &dfx__pass_remap,
    &dfx__pass_ewfuse,
};
#define N_PASSES ((int)(sizeof all_passes / sizeof all_passes[0]))
#define MAX_ROUNDS 3

const dfx_pass *const *dfx__passes_all(int *n) {
  *n = N_PASSES;
  return all_passes;
}

const dfx_pass *dfx__pass_find(const char *name) {
  for (int i = 0; i < N_PASSES; i++)
    if (strcmp(all_passes[i]->name, name) == 0) return all_passes[i];
  return NULL;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

bool dfx__pass_keeps(const dfx_pass_ctx *ctx, const char *name) {
  return ctx->n_keep > 0 && bsearch(&name, ctx->keep, (size_t)ctx->n_keep, sizeof *ctx->keep, cmp_str) != NULL;
}

bool dfx__pass_fed(const dfx_pass_ctx *ctx, const char *name) {
  return ctx->n_fed > 0 && bsearch(&name, ctx->fed, (size_t)ctx->n_fed, sizeof *ctx->fed, cmp_str) != NULL;
}

bool dfx__pass_pure(const dfx_pass_ctx *ctx, const dfx_node *n) {
  if (!n->def || (n->def->flags & DFX_OP_STATEFUL)) return false;
  if (n->ctrl != DFX_CTRL_NONE) return false; /* control flow is never a pure function */
  const dfx_kernel_def *k = ctx->reg ? dfx__registry_kernel_any(ctx->reg, n->op) : NULL;
  return !(k && (k->flags & DFX_KERNEL_STATEFUL));
}

/* ---- what to keep ---- */

static dfx_code names_add(char ***names, int *n, int *cap, const char *name) {
  if (*n == *cap) {
    int nc = *cap ? *cap * 2 : 16;
    char **nk = dfx__realloc(*names, sizeof *nk * (size_t)nc);
    if (!nk) return DFX_ENOMEM;
    *names = nk;
    *cap = nc;
  }
  if (!((*names)[*n] = dfx__strdup(name))) return DFX_ENOMEM;
  (*n)++;
  return DFX_OK;
}

static void names_free(char **names, int n) {
  for (int i = 0; i < n; i++) dfx__free(names[i]);
  dfx__free(names);
}

/* The fetched, fed and target nodes of a run; without a run, the graph's
 * inputs (placeholders, which a caller may feed) and outputs (root-frame
 * nodes nobody consumes, which a caller may fetch). What a run may feed:
 * its feeds, and the placeholders in any case (a plan may be optimised for
 * one signature and a graph saved by `dfexec optimize` run with another). */
static dfx_code build_keep(dfx_pass_ctx *c, const dfx_pass_ports *p) {
  int cap = 0, fcap = 0;
  dfx_code rc = DFX_OK;
  c->ports_known = p && (p->n_fetches || p->n_targets);
  if (c->ports_known) {
    for (int i = 0; i < p->n_feeds && rc == DFX_OK; i++) rc = names_add(&c->keep, &c->n_keep, &cap, p->feeds[i].node);
    for (int i = 0; i < p->n_fetches && rc == DFX_OK; i++)
      rc = names_add(&c->keep, &c->n_keep, &cap, p->fetches[i].node);
    for (int i = 0; i < p->n_targets && rc == DFX_OK; i++) rc = names_add(&c->keep, &c->n_keep, &cap, p->targets[i]);
  }
  for (int i = 0; p && i < p->n_feeds && rc == DFX_OK; i++) rc = names_add(&c->fed, &c->n_fed, &fcap, p->feeds[i].node);
  for (int i = 0; i < c->g->n_nodes && rc == DFX_OK; i++) {
    const dfx_node *n = &c->g->nodes[i];
    bool input = strncmp(n->op, "Placeholder", 11) == 0;
    bool output = n->n_edges == 0 && n->frame == 0;
    if (input) rc = names_add(&c->fed, &c->n_fed, &fcap, n->name);
    if (rc == DFX_OK && !c->ports_known && (input || output)) rc = names_add(&c->keep, &c->n_keep, &cap, n->name);
  }
  if (rc != DFX_OK) return dfx__status_set(c->st, DFX_ENOMEM, "out of memory");
  /* qsort's arguments must not be NULL even for zero elements (C11 7.22.5). */
  if (c->n_keep) qsort(c->keep, (size_t)c->n_keep, sizeof *c->keep, cmp_str);
  if (c->n_fed) qsort(c->fed, (size_t)c->n_fed, sizeof *c->fed, cmp_str);
  return DFX_OK;
}

/* Debug builds: every kept node is still there after a pass. */
static void check_kept(const dfx_pass_ctx *c, const dfx_pass *p) {
#ifndef NDEBUG
  for (int i = 0; i < c->n_keep; i++)
    if (dfx__graph_find(c->g, c->keep[i], (size_t)-1) < 0) {
      fprintf(stderr, "dfexec: pass '%s' removed node '%s', which it had to keep\n", p->name, c->keep[i]);
      DFX_ASSERT(!"a pass removed a kept node");
    }
#else
  (void)c;
  (void)p;
#endif
}

/* ---- the pipeline ---- */

static dfx_code parse_list(const char *list, const dfx_pass **out, int *n, dfx_status *st) {
  *n = 0;
  if (!list || strcmp(list, "default") == 0) {
    for (int i = 0; i < N_PASSES; i++)
      if (all_passes[i]->in_default) out[(*n)++] = all_passes[i];
    return DFX_OK;
  }
  if (strcmp(list, "none") == 0 || !*list) return DFX_OK;
  const char *p = list;
  while (*p) {
    size_t len = strcspn(p, ",");
    char name[64];
    if (len == 0 || len >= sizeof name || *n == N_PASSES * 4) goto bad;
    memcpy(name, p, len);
    name[len] = 0;
    const dfx_pass *pass = dfx__pass_find(name);
    if (!pass) goto bad;
    out[(*n)++] = pass;
    p += len;
    if (*p == ',') p++;
  }
  return DFX_OK;
bad:
  dfx__status_set(st, DFX_EINVAL, "unknown pass in '%s'; the passes are: none, default", list);
  for (int i = 0; i < N_PASSES; i++) dfx__status_append(st, ", %s", all_passes[i]->name);
  return DFX_EINVAL;
}

dfx_code dfx__passes_check(const char *list, dfx_status *st) {
  const dfx_pass *pipeline[N_PASSES * 4];
  int n;
  return parse_list(list, pipeline, &n, st);
}

static dfx_code report_add(dfx_pass_report *r, const dfx_pass *p, int round, dfx_pass_counts counts, int64_t ns) {
  if (!r) return DFX_OK;
  if (r->n_rows == r->cap_rows) {
    int nc = r->cap_rows ? r->cap_rows * 2 : 16;
    dfx_pass_report_row *nr = dfx__realloc(r->rows, sizeof *nr * (size_t)nc);
    if (!nr) return DFX_ENOMEM;
    r->rows = nr;
    r->cap_rows = nc;
  }
  r->rows[r->n_rows++] = (dfx_pass_report_row){p->name, round, counts, ns};
  return DFX_OK;
}

void dfx__pass_report_free(dfx_pass_report *r) {
  if (!r) return;
  dfx__free(r->rows);
  memset(r, 0, sizeof *r);
}

dfx_code dfx__passes_run(dfx_graph *g, const char *list, const dfx_pass_ports *ports, const dfx_registry *reg,
                         dfx_pass_report *report, dfx_status *st) {
  DFX_ASSERT(g->final);
  if (report) memset(report, 0, sizeof *report);
  const dfx_pass *pipeline[N_PASSES * 4];
  int n_pipeline;
  dfx_code c = parse_list(list, pipeline, &n_pipeline, st);
  if (c != DFX_OK) return c;
  if (report) report->nodes_before = report->nodes_after = g->n_nodes;
  bool lower = dfx__lower_needed(g);
  if (n_pipeline == 0 && !lower) return DFX_OK;
  dfx_pass_ctx ctx = {.g = g, .reg = reg, .st = st};
  if ((c = build_keep(&ctx, ports)) != DFX_OK) goto done;
  if (lower) {
    /* Always first, and outside the rounds: a graph with functional ops
     * cannot run, and the other passes only know v1 control flow. */
    uint64_t t0 = uv_hrtime();
    if ((c = dfx__pass_lower.run(&ctx)) != DFX_OK) {
      char msg[DFX_STATUS_MSG_MAX];
      snprintf(msg, sizeof msg, "%s", st ? st->msg : "");
      dfx__status_set(st, c, "pass 'lower': %s", msg);
      dfx__graph_finalize(g, NULL);
      goto done;
    }
    if ((c = dfx__graph_finalize(g, st)) != DFX_OK) {
      char msg[DFX_STATUS_MSG_MAX];
      snprintf(msg, sizeof msg, "%s", st ? st->msg : "");
      if (c != DFX_ENOMEM) c = DFX_EINVAL;
      dfx__status_set(st, c, "lowering functional control flow gave an invalid graph: %s", msg);
      goto done;
    }
    if (report_add(report, &dfx__pass_lower, 1, ctx.counts, (int64_t)(uv_hrtime() - t0)) != DFX_OK) {
      c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
      goto done;
    }
    /* What to keep is recomputed on the lowered graph (outputs of bodies are new). */
    names_free(ctx.keep, ctx.n_keep);
    names_free(ctx.fed, ctx.n_fed);
    ctx.keep = ctx.fed = NULL;
    ctx.n_keep = ctx.n_fed = 0;
    if ((c = build_keep(&ctx, ports)) != DFX_OK) goto done;
  }
  for (int round = 1; round <= MAX_ROUNDS; round++) {
    bool changed = false;
    for (int i = 0; i < n_pipeline; i++) {
      const dfx_pass *p = pipeline[i];
      memset(&ctx.counts, 0, sizeof ctx.counts);
      uint64_t t0 = uv_hrtime();
      c = p->run(&ctx);
      if (c != DFX_OK) {
        char msg[DFX_STATUS_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", st ? st->msg : "");
        dfx__status_set(st, c, "pass '%s': %s", p->name, msg);
        /* Leave a valid graph behind even after a failed pass. */
        dfx__graph_finalize(g, NULL);
        goto done;
      }
      bool did = ctx.counts.removed || ctx.counts.added || ctx.counts.rewritten;
      if (did && (c = dfx__graph_finalize(g, st)) != DFX_OK) {
        char msg[DFX_STATUS_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", st ? st->msg : "");
        if (c == DFX_ENOMEM)
          dfx__status_set(st, c, "pass '%s': out of memory finalising the graph", p->name);
        else
          c = dfx__status_set(st, DFX_EINTERNAL, "pass '%s' left an invalid graph (a bug in dfexec): %s", p->name, msg);
        goto done;
      }
      check_kept(&ctx, p);
      changed |= did;
      if (report_add(report, p, round, ctx.counts, (int64_t)(uv_hrtime() - t0)) != DFX_OK) {
        c = dfx__status_set(st, DFX_ENOMEM, "out of memory");
        goto done;
      }
    }
    if (!changed) break;
  }
  if (report) report->nodes_after = g->n_nodes;
done:
  names_free(ctx.keep, ctx.n_keep);
  names_free(ctx.fed, ctx.n_fed);
  return c;
}
