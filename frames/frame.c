/* frame.c - allocation, recycling and teardown of frame and iteration state.
 * Iteration blocks are recycled inside their frame instance and frame
 * instances per static frame inside the run, so a long loop allocates
 * nothing per iteration once warm. */
#include "frame.h"

#include <string.h>

#include "alloc.h"

/* ---- small vectors ---- */

int dfx__held_push(dfx_held_vec *v, int node, dfx_tensor *value, int dead_src) {
  if (v->n == v->cap) {
    int nc = v->cap ? v->cap * 2 : 4;
    dfx_held *nv = dfx__realloc(v->v, sizeof *nv * (size_t)nc);
    if (!nv) return -1;
    v->v = nv;
    v->cap = nc;
  }
  v->v[v->n++] = (dfx_held){node, value, dead_src};
  return 0;
}

static void held_clear(dfx_held_vec *v) {
  for (int i = 0; i < v->n; i++) dfx__tensor_unref(v->v[i].value);
  v->n = 0;
}

static void held_free(dfx_held_vec *v) {
  held_clear(v);
  dfx__free(v->v);
  memset(v, 0, sizeof *v);
}

void dfx__ready_init(dfx_ready *r) {
  r->v = r->small;
  r->n = 0;
  r->cap = (int)(sizeof r->small / sizeof r->small[0]);
}

int dfx__ready_grow(dfx_ready *r) {
  int nc = r->cap * 2;
  dfx_tagged *nv = dfx__malloc(sizeof *nv * (size_t)nc);
  if (!nv) return -1;
  memcpy(nv, r->v, sizeof *nv * (size_t)r->n);
  if (r->v != r->small) dfx__free(r->v);
  r->v = nv;
  r->cap = nc;
  return 0;
}

void dfx__ready_free(dfx_ready *r) {
  if (r->v != r->small) dfx__free(r->v);
  dfx__ready_init(r);
}

/* ---- iterations ---- */

dfx_iter *dfx__iter_new(dfx_exec *ex, dfx_frame *f, int64_t num) {
  const dfx_pframe *pf = &ex->plan->frames[f->sframe];
  dfx_iter *it = f->free_iters;
  if (it) {
    f->free_iters = it->next_free;
  } else {
    size_t nl = (size_t)pf->n_local, ni = (size_t)pf->total_inputs;
    size_t bytes = sizeof *it + sizeof(int32_t) * 3 * nl + sizeof(dfx_tensor *) * ni + 16;
    it = dfx__malloc(bytes);
    if (!it) return NULL;
    char *p = (char *)(it + 1);
    it->inputs = (dfx_tensor **)p;
    memset(it->inputs, 0, sizeof(dfx_tensor *) * ni);
    p += sizeof(dfx_tensor *) * ni;
    it->pending = (int32_t *)p;
    it->dead = it->pending + nl;
    it->dead_src = it->dead + nl;
  }
  it->iter_num = num;
  it->outstanding_ops = 0;
  it->outstanding_frame_count = 0;
  it->children = NULL;
  it->next_free = NULL;
  memcpy(it->pending, pf->pending_init, sizeof(int32_t) * (size_t)pf->n_local);
  memset(it->dead, 0, sizeof(int32_t) * 2 * (size_t)pf->n_local);
  return it;
}

/* A node that got some but not all of its inputs in a finished iteration can
 * only come from an ill-formed graph; remember a few for the stuck report. */
static void note_waiting(dfx_exec *ex, dfx_frame *f, const dfx_iter *it) {
  const dfx_pframe *pf = &ex->plan->frames[f->sframe];
  /* A scan without branches first: this runs once per iteration of every loop. */
  int any = 0;
  for (int i = 0; i < pf->n_local; i++) any |= dfx__partly_activated(it->pending[i], pf->pending_init[i], it->dead[i]);
  if (!any) return;
  for (int i = 0; i < pf->n_local; i++) {
    int32_t p = it->pending[i];
    if (!dfx__partly_activated(p, pf->pending_init[i], it->dead[i])) continue;
    uv_mutex_lock(&ex->mu);
    if (ex->n_stuck < (int)(sizeof ex->stuck / sizeof ex->stuck[0])) {
      for (int n = 0; n < ex->plan->n_nodes; n++)
        if (ex->plan->nodes[n].frame == f->sframe && ex->plan->nodes[n].local == i) {
          ex->stuck[ex->n_stuck].node = n;
          ex->stuck[ex->n_stuck].frame = f->name;
          ex->stuck[ex->n_stuck].iter = it->iter_num;
          ex->stuck[ex->n_stuck].pending = p;
          ex->n_stuck++;
          break;
        }
    }
    uv_mutex_unlock(&ex->mu);
  }
}

void dfx__iter_release(dfx_exec *ex, dfx_frame *f, dfx_iter *it) {
  const dfx_pframe *pf = &ex->plan->frames[f->sframe];
  note_waiting(ex, f, it);
  /* Slots still holding values belong to nodes that never ran (errors, or a
   * Merge that fired on another input). */
  uintptr_t any = 0;
  for (int i = 0; i < pf->total_inputs; i++) any |= (uintptr_t)it->inputs[i];
  if (any)
    for (int i = 0; i < pf->total_inputs; i++)
      if (it->inputs[i]) {
        dfx__tensor_unref(it->inputs[i]);
        it->inputs[i] = NULL;
      }
  it->next_free = f->free_iters;
  f->free_iters = it;
}

/* ---- frames ---- */

dfx_frame *dfx__frame_new(dfx_exec *ex, int sf, dfx_frame *parent, dfx_iter *parent_iter) {
  const dfx_pframe *pf = &ex->plan->frames[sf];
  uv_mutex_lock(&ex->mu);
  dfx_frame *f = ex->free_frames[sf];
  if (f) ex->free_frames[sf] = f->next_free;
  uv_mutex_unlock(&ex->mu);
  if (!f) {
    f = dfx__calloc(1, sizeof *f);
    if (!f) return NULL;
    f->max_parallel = pf->parallel_iterations;
    f->ring = dfx__calloc((size_t)f->max_parallel + 1, sizeof(dfx_iter *));
    if (!f->ring) {
      dfx__free(f->ring);
      dfx__free(f);
      return NULL;
    }
  }
  f->sframe = sf;
  f->name = pf->name;
  f->parent = parent;
  f->parent_iter = parent_iter;
  f->parent_iter_num = parent_iter ? parent_iter->iter_num : 0;
  f->next_sibling = NULL;
  f->num_pending_inputs = pf->n_enters;
  f->iteration_count = 0;
  f->num_outstanding_iterations = 1;
  f->next_free = NULL;
  dfx_iter *it0 = dfx__iter_new(ex, f, 0);
  if (!it0) {
    dfx__frame_release(ex, f);
    return NULL;
  }
  f->ring[0] = it0;
  uv_mutex_lock(&ex->mu);
  f->live_prev = NULL;
  f->live_next = ex->live;
  if (ex->live) ex->live->live_prev = f;
  ex->live = f;
  uv_mutex_unlock(&ex->mu);
  return f;
}

/* Returns a frame (finished or abandoned) to the run's free list. */
void dfx__frame_release(dfx_exec *ex, dfx_frame *f) {
  for (int k = 0; k <= f->max_parallel; k++)
    if (f->ring[k]) {
      dfx__iter_release(ex, f, f->ring[k]);
      f->ring[k] = NULL;
    }
  held_clear(&f->next_iter_roots);
  held_clear(&f->inv_values);
  held_clear(&f->dead_exits);
  uv_mutex_lock(&ex->mu);
  if (f->live_prev || ex->live == f) { /* unlink if it is on the live list */
    if (f->live_prev) f->live_prev->live_next = f->live_next;
    else ex->live = f->live_next;
    if (f->live_next) f->live_next->live_prev = f->live_prev;
  }
  f->live_prev = f->live_next = NULL;
  f->next_free = ex->free_frames[f->sframe];
  ex->free_frames[f->sframe] = f;
  uv_mutex_unlock(&ex->mu);
}

static void frame_destroy(dfx_frame *f) {
  while (f->free_iters) {
    dfx_iter *n = f->free_iters->next_free;
    dfx__free(f->free_iters);
    f->free_iters = n;
  }
  held_free(&f->next_iter_roots);
  held_free(&f->inv_values);
  held_free(&f->dead_exits);
  dfx__free(f->ring);
  dfx__free(f);
}

dfx_code dfx__exec_init(dfx_exec *ex, const dfx_plan *plan) {
  memset(ex, 0, sizeof *ex);
  ex->plan = plan;
  if (uv_mutex_init(&ex->mu)) return DFX_EINTERNAL;
  ex->free_frames = dfx__calloc((size_t)plan->n_frames + 1, sizeof(dfx_frame *));
  if (!ex->free_frames) {
    uv_mutex_destroy(&ex->mu);
    return DFX_ENOMEM;
  }
  ex->root = dfx__frame_new(ex, 0, NULL, NULL);
  if (!ex->root) {
    dfx__exec_destroy(ex); /* a half-built root may sit on the free list */
    return DFX_ENOMEM;
  }
  return DFX_OK;
}

void dfx__exec_destroy(dfx_exec *ex) {
  while (ex->live) dfx__frame_release(ex, ex->live);
  for (int sf = 0; sf < ex->plan->n_frames; sf++)
    while (ex->free_frames[sf]) {
      dfx_frame *n = ex->free_frames[sf]->next_free;
      frame_destroy(ex->free_frames[sf]);
      ex->free_frames[sf] = n;
    }
  dfx__free(ex->free_frames);
  uv_mutex_destroy(&ex->mu);
}
