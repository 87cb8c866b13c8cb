/* frame.c - allocation, recycling and teardown of the propagator's per-run
 * state: frame instances, iterations, held values and ready lists.
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

void dfx__ready_init(dfx_ready *r, dfx_status *st) {
  r->st = st;
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
  dfx__ready_init(r, r->st);
}

/* ---- iterations ---- */

dfx_iter *dfx__iter_new(dfx_prop *p, dfx_frame *f, int64_t num) {
  const dfx_fframe *pf = &p->flow->frames[f->sframe];
  dfx_iter *it = f->free_iters;
  if (it) {
    f->free_iters = it->next_free;
  } else {
    size_t nl = (size_t)pf->n_local, ni = (size_t)pf->total_inputs;
    size_t bytes = sizeof *it + sizeof(int32_t) * 3 * nl + sizeof(dfx_tensor *) * ni + 16;
    it = dfx__malloc(bytes);
    if (!it) return NULL;
    char *mem = (char *)(it + 1);
    it->inputs = (dfx_tensor **)mem;
    memset(it->inputs, 0, sizeof(dfx_tensor *) * ni);
    mem += sizeof(dfx_tensor *) * ni;
    it->pending = (int32_t *)mem;
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
static void note_waiting(dfx_prop *p, dfx_frame *f, const dfx_iter *it) {
  const dfx_fframe *pf = &p->flow->frames[f->sframe];
  /* A scan without branches first: this runs once per iteration of every loop. */
  int any = 0;
  for (int i = 0; i < pf->n_local; i++) any |= dfx__partly_activated(it->pending[i], pf->pending_init[i], it->dead[i]);
  if (!any) return;
  for (int i = 0; i < pf->n_local; i++) {
    int32_t pend = it->pending[i];
    if (!dfx__partly_activated(pend, pf->pending_init[i], it->dead[i])) continue;
    uv_mutex_lock(&p->mu);
    if (p->n_stuck < (int)(sizeof p->stuck / sizeof p->stuck[0])) {
      for (int n = 0; n < p->flow->n_nodes; n++)
        if (p->flow->nodes[n].frame == f->sframe && p->flow->nodes[n].local == i) {
          p->stuck[p->n_stuck].node = n;
          p->stuck[p->n_stuck].frame = f->name;
          p->stuck[p->n_stuck].iter = it->iter_num;
          p->stuck[p->n_stuck].pending = pend;
          p->n_stuck++;
          break;
        }
    }
    uv_mutex_unlock(&p->mu);
  }
}

void dfx__iter_release(dfx_prop *p, dfx_frame *f, dfx_iter *it) {
  const dfx_fframe *pf = &p->flow->frames[f->sframe];
  note_waiting(p, f, it);
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

dfx_frame *dfx__frame_new(dfx_prop *p, int sf, dfx_frame *parent, dfx_iter *parent_iter) {
  const dfx_fframe *pf = &p->flow->frames[sf];
  uv_mutex_lock(&p->mu);
  dfx_frame *f = p->free_frames[sf];
  if (f) p->free_frames[sf] = f->next_free;
  uv_mutex_unlock(&p->mu);
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
  dfx_iter *it0 = dfx__iter_new(p, f, 0);
  if (!it0) {
    dfx__frame_release(p, f);
    return NULL;
  }
  f->ring[0] = it0;
  uv_mutex_lock(&p->mu);
  f->live_prev = NULL;
  f->live_next = p->live;
  if (p->live) p->live->live_prev = f;
  p->live = f;
  uv_mutex_unlock(&p->mu);
  return f;
}

/* Returns a frame (finished or abandoned) to the run's free list. */
void dfx__frame_release(dfx_prop *p, dfx_frame *f) {
  for (int k = 0; k <= f->max_parallel; k++)
    if (f->ring[k]) {
      dfx__iter_release(p, f, f->ring[k]);
      f->ring[k] = NULL;
    }
  held_clear(&f->next_iter_roots);
  held_clear(&f->inv_values);
  held_clear(&f->dead_exits);
  uv_mutex_lock(&p->mu);
  if (f->live_prev || p->live == f) { /* unlink if it is on the live list */
    if (f->live_prev) f->live_prev->live_next = f->live_next;
    else p->live = f->live_next;
    if (f->live_next) f->live_next->live_prev = f->live_prev;
  }
  f->live_prev = f->live_next = NULL;
  f->next_free = p->free_frames[f->sframe];
  p->free_frames[f->sframe] = f;
  uv_mutex_unlock(&p->mu);
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

dfx_code dfx__prop_init(dfx_prop *p, const dfx_flow *flow) {
  memset(p, 0, sizeof *p);
  p->flow = flow;
  if (uv_mutex_init(&p->mu)) return DFX_EINTERNAL;
  p->free_frames = dfx__calloc((size_t)flow->n_frames + 1, sizeof(dfx_frame *));
  if (!p->free_frames) {
    uv_mutex_destroy(&p->mu);
    return DFX_ENOMEM;
  }
  if (flow->n_dead_slots && !(p->settled_dead = dfx__calloc((size_t)flow->n_dead_slots, sizeof(int)))) {
    dfx__prop_destroy(p);
    return DFX_ENOMEM;
  }
  p->root = dfx__frame_new(p, 0, NULL, NULL);
  if (!p->root) {
    dfx__prop_destroy(p); /* a half-built root may sit on the free list */
    return DFX_ENOMEM;
  }
  return DFX_OK;
}

void dfx__prop_destroy(dfx_prop *p) {
  while (p->live) dfx__frame_release(p, p->live);
  for (int sf = 0; sf < p->flow->n_frames; sf++)
    while (p->free_frames[sf]) {
      dfx_frame *n = p->free_frames[sf]->next_free;
      frame_destroy(p->free_frames[sf]);
      p->free_frames[sf] = n;
    }
  dfx__free(p->free_frames);
  dfx__free(p->settled_dead);
  uv_mutex_destroy(&p->mu);
}
