/* ctc_beam_impl.h - the CTC decoders for one element type, included by ctc.c
 * once per dtype with CTC_T (float or double) and CTC_F (a name suffix)
 * defined. Arithmetic stays in CTC_T and in TensorFlow's operation order so
 * that scores agree with TF's to the last bit where libm does. */

#define CTC_CAT_(a, b) a##_##b
#define CTC_CAT(a, b) CTC_CAT_(a, b)
#define PROB CTC_CAT(ctc_prob, CTC_F)
#define ENTRY CTC_CAT(ctc_entry, CTC_F)
#define BEAM CTC_CAT(ctc_beam, CTC_F)

typedef struct PROB {
  CTC_T total, blank, label;
} PROB;

typedef struct ENTRY {
  int32_t parent; /* -1 for the root */
  int32_t label;  /* -1 for the root */
  PROB oldp, newp;
} ENTRY;

/* One batch element's search: every prefix ever pushed (a trie through
 * `parent`), a hash of (parent, label) -> child, and the beam as a min-heap
 * on newp.total (TF's TopN: its bottom is the entry a better one evicts). */
typedef struct BEAM {
  ENTRY *e;
  int32_t n, cap;
  int32_t *hash; /* entry index + 1, 0 = empty */
  uint32_t hcap;
  int32_t *heap, nheap, width, hpcap; /* heap and branches hold hpcap */
  int32_t *branches;
} BEAM;

static CTC_T CTC_CAT(lse, CTC_F)(CTC_T a, CTC_T b) {
  if (a == -(CTC_T)INFINITY) return b;
  if (b == -(CTC_T)INFINITY) return a;
  return a > b ? a + (CTC_T)log1p(exp(b - a)) : b + (CTC_T)log1p(exp(a - b));
}

static void CTC_CAT(prob_reset, CTC_F)(PROB *p) { p->total = p->blank = p->label = -(CTC_T)INFINITY; }

static void CTC_CAT(heap_down, CTC_F)(BEAM *s, int32_t i) {
  for (;;) {
    int32_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < s->nheap && s->e[s->heap[l]].newp.total < s->e[s->heap[m]].newp.total) m = l;
    if (r < s->nheap && s->e[s->heap[r]].newp.total < s->e[s->heap[m]].newp.total) m = r;
    if (m == i) return;
    int32_t t = s->heap[i];
    s->heap[i] = s->heap[m];
    s->heap[m] = t;
    i = m;
  }
}

static void CTC_CAT(heap_push, CTC_F)(BEAM *s, int32_t x) {
  int32_t i = s->nheap++;
  s->heap[i] = x;
  while (i > 0) {
    int32_t p = (i - 1) / 2;
    if (!(s->e[s->heap[i]].newp.total < s->e[s->heap[p]].newp.total)) break;
    int32_t t = s->heap[i];
    s->heap[i] = s->heap[p];
    s->heap[p] = t;
    i = p;
  }
}

static uint32_t CTC_CAT(hslot, CTC_F)(const BEAM *s, int32_t parent, int32_t label) {
  uint64_t h = ((uint64_t)(uint32_t)parent << 32 | (uint32_t)label) * 0x9e3779b97f4a7c15ULL;
  return (uint32_t)(h >> 32) & (s->hcap - 1);
}

/* The child of `parent` with `label`, or -1. */
static int32_t CTC_CAT(find_child, CTC_F)(const BEAM *s, int32_t parent, int32_t label) {
  if (!s->hcap) return -1;
  for (uint32_t i = CTC_CAT(hslot, CTC_F)(s, parent, label);; i = (i + 1) & (s->hcap - 1)) {
    int32_t x = s->hash[i] - 1;
    if (x < 0) return -1;
    if (s->e[x].parent == parent && s->e[x].label == label) return x;
  }
}

/* Appends a new entry (and indexes it when it has a parent); -1 when out of
 * memory or past the tensor size limit (the caller fails). */
static int32_t CTC_CAT(add_entry, CTC_F)(BEAM *s, int32_t parent, int32_t label) {
  if (s->n == s->cap) {
    if (s->cap > INT32_MAX / 4) return -1;
    int32_t cap = s->cap ? s->cap * 2 : 64;
    size_t bytes = dfx__mul_size((size_t)cap, sizeof(ENTRY));
    if (bytes > dfx__tensor_limit()) return -1;
    ENTRY *e = dfx__realloc(s->e, bytes);
    if (!e) return -1;
    s->e = e;
    s->cap = cap;
  }
  if (parent >= 0 && (uint32_t)s->n * 2 >= s->hcap) {
    uint32_t hcap = s->hcap ? s->hcap * 2 : 256;
    int32_t *h = dfx__calloc(hcap, sizeof(int32_t));
    if (!h) return -1;
    dfx__free(s->hash);
    s->hash = h;
    s->hcap = hcap;
    for (int32_t i = 1; i < s->n; i++) {
      uint32_t j = CTC_CAT(hslot, CTC_F)(s, s->e[i].parent, s->e[i].label);
      while (s->hash[j]) j = (j + 1) & (hcap - 1);
      s->hash[j] = i + 1;
    }
  }
  int32_t x = s->n++;
  s->e[x].parent = parent;
  s->e[x].label = label;
  CTC_CAT(prob_reset, CTC_F)(&s->e[x].oldp);
  CTC_CAT(prob_reset, CTC_F)(&s->e[x].newp);
  if (parent >= 0) {
    uint32_t j = CTC_CAT(hslot, CTC_F)(s, parent, label);
    while (s->hash[j]) j = (j + 1) & (s->hcap - 1);
    s->hash[j] = x + 1;
  }
  return x;
}

static _Thread_local const BEAM *CTC_CAT(sort_ctx, CTC_F);
/* Descending newp.total; ties by creation order, so runs are deterministic. */
static int CTC_CAT(by_total_desc, CTC_F)(const void *a, const void *b) {
  const ENTRY *e = CTC_CAT(sort_ctx, CTC_F)->e;
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  CTC_T u = e[x].newp.total, v = e[y].newp.total;
  if (u > v) return -1;
  if (u < v) return 1;
  return (x > y) - (x < y);
}

/* Sorts idx[0..n) by descending newp.total (qsort takes no context, so the
 * search goes through a thread-local). */
static void CTC_CAT(sort_desc, CTC_F)(const BEAM *s, int32_t *idx, int32_t n) {
  CTC_CAT(sort_ctx, CTC_F) = s;
  qsort(idx, (size_t)n, sizeof *idx, CTC_CAT(by_total_desc, CTC_F));
}

/* Room for one more beam entry in heap and branches (the beam holds at
 * most `width`, but width is an attr: grow only as far as it is used). */
static bool CTC_CAT(heap_room, CTC_F)(BEAM *s) {
  if (s->nheap < s->hpcap) return true;
  if (s->hpcap > INT32_MAX / 2) return false;
  int32_t cap = s->hpcap ? s->hpcap * 2 : 16;
  int32_t *h = dfx__realloc(s->heap, (size_t)cap * sizeof(int32_t));
  if (!h) return false;
  s->heap = h;
  int32_t *b = dfx__realloc(s->branches, (size_t)cap * sizeof(int32_t));
  if (!b) return false;
  s->branches = b;
  s->hpcap = cap;
  return true;
}

/* Empties the search and puts the root (ln 1 total and blank) in the beam. */
static bool CTC_CAT(beam_reset, CTC_F)(BEAM *s) {
  s->n = 0;
  if (s->hash) memset(s->hash, 0, (size_t)s->hcap * sizeof(int32_t));
  s->nheap = 0;
  if (!CTC_CAT(heap_room, CTC_F)(s) || CTC_CAT(add_entry, CTC_F)(s, -1, -1) < 0) return false;
  s->e[0].newp.total = 0;
  s->e[0].newp.blank = 0;
  CTC_CAT(heap_push, CTC_F)(s, 0);
  return true;
}

/* One time step over the logits x[0..classes) (blank = classes - 1),
 * normalised by their log-sum-exp as TF's CTCBeamSearchDecoder::Step. */
static dfx_code CTC_CAT(beam_step, CTC_F)(dfx_kctx *ctx, BEAM *s, const CTC_T *x, int32_t classes, int64_t *left) {
  CTC_T mx = x[0];
  for (int32_t j = 1; j < classes; j++)
    if (x[j] > mx) mx = x[j];
  CTC_T sum = 0;
  for (int32_t j = 0; j < classes; j++) sum += (CTC_T)exp(x[j] - mx);
  CTC_T norm = mx + (CTC_T)log(sum);
  const CTC_T blank = x[classes - 1], zero = -(CTC_T)INFINITY;

  int32_t nb = s->nheap;
  memcpy(s->branches, s->heap, (size_t)nb * sizeof(int32_t));
  CTC_CAT(sort_desc, CTC_F)(s, s->branches, nb);
  s->nheap = 0;
  for (int32_t i = 0; i < nb; i++) s->e[s->branches[i]].oldp = s->e[s->branches[i]].newp;
  for (int32_t i = 0; i < nb; i++) {
    ENTRY *b = &s->e[s->branches[i]];
    if (b->parent >= 0) {
      const ENTRY *p = &s->e[b->parent];
      if (p->newp.total != zero) {
        CTC_T prev = b->label == p->label ? p->oldp.blank : p->oldp.total;
        b->newp.label = CTC_CAT(lse, CTC_F)(b->newp.label, prev);
      }
      b->newp.label += x[b->label] - norm;
    }
    b->newp.blank = b->oldp.total + blank - norm;
    b->newp.total = CTC_CAT(lse, CTC_F)(b->newp.blank, b->newp.label);
    CTC_CAT(heap_push, CTC_F)(s, s->branches[i]);
  }
  for (int32_t i = 0; i < nb; i++) {
    int32_t bi = s->branches[i];
    PROB bold = s->e[bi].oldp;
    int32_t blabel = s->e[bi].label;
    if (!(bold.total > zero && (s->nheap < s->width || bold.total > s->e[s->heap[0]].newp.total))) continue;
    for (int32_t l = 0; l < classes - 1; l++) {
      int32_t c = CTC_CAT(find_child, CTC_F)(s, bi, l);
      if (c >= 0 && s->e[c].newp.total != zero) continue;
      CTC_T prev = l == blabel ? bold.blank : bold.total;
      CTC_T p = x[l] - norm + prev;
      if (!(p > zero && (s->nheap < s->width || p > s->e[s->heap[0]].newp.total))) {
        if (c >= 0) {
          CTC_CAT(prob_reset, CTC_F)(&s->e[c].oldp);
          CTC_CAT(prob_reset, CTC_F)(&s->e[c].newp);
        }
        continue;
      }
      if ((s->nheap < s->width && !CTC_CAT(heap_room, CTC_F)(s)) ||
          (c < 0 && (c = CTC_CAT(add_entry, CTC_F)(s, bi, l)) < 0))
        return dfx__kctx_fail(ctx, DFX_ENOMEM, "CTC beam search: out of memory for beam entries");
      s->e[c].newp.blank = zero;
      s->e[c].newp.label = p;
      s->e[c].newp.total = p;
      if (s->nheap == s->width) {
        CTC_CAT(prob_reset, CTC_F)(&s->e[s->heap[0]].newp);
        s->heap[0] = c;
        CTC_CAT(heap_down, CTC_F)(s, 0);
      } else {
        CTC_CAT(heap_push, CTC_F)(s, c);
      }
    }
    dfx_code code = stick(ctx, left, classes);
    if (code) return code;
  }
  return DFX_OK;
}

/* Greedy (best path) decoding of batch element b; appends its labels to *out. */
static dfx_code CTC_CAT(greedy, CTC_F)(dfx_kctx *ctx, const CTC_T *in, int64_t batch, int64_t classes, int64_t b,
                                       int32_t len, int64_t blank, bool merge, svec *out, CTC_T *logp) {
  int64_t prev = -1;
  CTC_T lp = 0;
  for (int32_t t = 0; t < len; t++) {
    const CTC_T *row = in + ((int64_t)t * batch + b) * classes;
    int64_t c = 0;
    CTC_T p = row[0];
    for (int64_t i = 1; i < classes; i++)
      if (row[i] > p) p = row[i], c = i;
    lp += -p;
    if (c != blank && !(merge && c == prev)) {
      dfx_code code = dfx__svec_push(ctx, out, c);
      if (code) return code;
    }
    prev = c;
  }
  *logp = lp;
  return DFX_OK;
}

/* Beam search over every batch element; paths[p] collects the labels of the
 * p-th best path of each element in turn, lens[b * top + p] their counts. */
static dfx_code CTC_CAT(beam_all, CTC_F)(dfx_kctx *ctx, const CTC_T *in, int64_t batch, int32_t classes,
                                         const int32_t *seq, int32_t width, int32_t top, bool merge, svec *paths,
                                         int64_t *lens, CTC_T *logp) {
  BEAM s = {.width = width};
  dfx_code code = DFX_OK;
  int64_t left = DFX_S_POLL_EVERY;
  int32_t *stack = NULL;
  for (int64_t b = 0; b < batch; b++) {
    if (!CTC_CAT(beam_reset, CTC_F)(&s)) {
      code = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
      goto fail;
    }
    for (int32_t t = 0; t < seq[b]; t++) {
      code = CTC_CAT(beam_step, CTC_F)(ctx, &s, in + ((int64_t)t * batch + b) * classes, classes, &left);
      if (code) goto fail;
    }
    if (top > width) {
      code = dfx__kctx_fail(ctx, DFX_EINVAL, "requested more paths than the beam width.");
      goto fail;
    }
    if (top > s.nheap) {
      code = dfx__kctx_fail(ctx, DFX_EINVAL, "Less leaves in the beam search than requested.");
      goto fail;
    }
    int32_t nb = s.nheap;
    memcpy(s.branches, s.heap, (size_t)nb * sizeof(int32_t));
    CTC_CAT(sort_desc, CTC_F)(&s, s.branches, nb);
    for (int32_t p = 0; p < top; p++) {
      int32_t x = s.branches[p], depth = 0;
      logp[b * top + p] = s.e[x].newp.total;
      for (int32_t y = x; s.e[y].parent >= 0; y = s.e[y].parent) depth++;
      dfx__free(stack);
      stack = dfx__malloc(dfx__mul_size((size_t)depth + 1, sizeof(int32_t)));
      if (!stack) {
        code = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
        goto fail;
      }
      /* LabelSeq: walk up from the leaf; with merge_repeated a label equal
       * to the one after it in the path is dropped. */
      int32_t k = 0, prev = -1;
      for (int32_t y = x; s.e[y].parent >= 0; y = s.e[y].parent) {
        if (!merge || s.e[y].label != prev) stack[k++] = s.e[y].label;
        prev = s.e[y].label;
      }
      lens[b * top + p] = k;
      while (k > 0)
        if ((code = dfx__svec_push(ctx, &paths[p], stack[--k]))) goto fail;
    }
  }
fail:
  dfx__free(stack);
  dfx__free(s.e);
  dfx__free(s.hash);
  dfx__free(s.heap);
  dfx__free(s.branches);
  return code;
}

#undef PROB
#undef ENTRY
#undef BEAM
#undef CTC_CAT
#undef CTC_CAT_
