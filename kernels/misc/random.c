/* random.c - RandomUniform, RandomUniformInt, RandomStandardNormal,
 * TruncatedNormal and RandomShuffle on a Philox stream laid out like TF's
 * (FillPhiloxRandom groups, 256 reserved counters per output), so seeded
 * results follow TF's CPU streams. Outputs are flat row-major. */
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "alloc.h"
#include "misc.h"
#include "philox.h"
#include "resource.h"

/* ---- shared state ---- */

/* SplitMix64: spreads a weak seed (time, an address, a counter) over all 64
 * bits, so nodes seeded in the same instant still get unrelated streams. */
static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

dfx_code dfx__rng_init(const dfx_node *n, void **state, dfx_status *st) {
  (void)st;
  rng_state *s = dfx__calloc(1, sizeof *s);
  if (!s) return DFX_ENOMEM;
  s->seed = (uint64_t)dfx__attr_int(n, "seed", 0);
  s->seed2 = (uint64_t)dfx__attr_int(n, "seed2", 0);
  if (s->seed == 0 && s->seed2 == 0) { /* TF: both zero means nondeterministic */
    static uint64_t salt;
    uint64_t x = uv_hrtime() ^ (uint64_t)(uintptr_t)s ^ __atomic_add_fetch(&salt, 0x1234567ull, __ATOMIC_RELAXED);
    s->seed = splitmix(&x);
    s->seed2 = splitmix(&x);
  }
  *state = s;
  return DFX_OK;
}

void dfx__rng_fini(void *state) { dfx__free(state); }

philox dfx__rng_reserve(rng_state *s, uint64_t samples) {
  /* Concurrent runs of one node each take a disjoint block of counters. The
   * counter's low 64 bits count within the stream, the high 64 are seed2;
   * the key is seed. */
  uint64_t off = __atomic_fetch_add(&s->offset, samples, __ATOMIC_RELAXED);
  philox g = {.key = {(uint32_t)s->seed, (uint32_t)(s->seed >> 32)},
              .ctr = {0, 0, (uint32_t)s->seed2, (uint32_t)(s->seed2 >> 32)},
              .used = 4};
  philox_skip(&g, off);
  return g;
}

dfx_code dfx__rng_shape(dfx_kctx *ctx, int i, int64_t *dims, int *ndims) {
  const dfx_tensor *t = ctx->in[i];
  char b[64];
  if ((t->dtype != DFX_I32 && t->dtype != DFX_I64) || t->ndims != 1)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "shape must be a vector of {int32,int64}, got shape %s",
                          DFX_SHAPE_STR(t, b));
  if (t->count > DFX_MAX_DIMS)
    return dfx__kctx_fail(ctx, DFX_EINVAL, "shape has %lld dimensions, at most %d supported", (long long)t->count,
                          DFX_MAX_DIMS);
  for (int64_t k = 0; k < t->count; k++) {
    dims[k] = dfx__tensor_get_i64(t, k);
    if (dims[k] < 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "Dimension %lld must be >= 0", (long long)dims[k]);
  }
  *ndims = (int)t->count;
  return DFX_OK;
}

/* ---- distributions (TF's random_distributions.h) ---- */

static inline void box_muller_f(uint32_t x0, uint32_t x1, float *f0, float *f1) {
  float u1 = u32_to_float(x0);
  /* Keeps log(u1) finite: a zero sample would give an infinite normal. */
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  const float v1 = (float)(2.0f * M_PI * u32_to_float(x1));
  const float u2 = sqrtf(-2.0f * logf(u1));
  *f0 = sinf(v1) * u2;
  *f1 = cosf(v1) * u2;
}

static inline void box_muller_d(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double *d0, double *d1) {
  double u1 = u64_to_double(x0, x1);
  if (u1 < 1.0e-7) u1 = 1.0e-7;
  const double v1 = 2 * M_PI * u64_to_double(x2, x3);
  const double u2 = sqrt(-2.0 * log(u1));
  *d0 = sin(v1) * u2;
  *d1 = cos(v1) * u2;
}

/* Random mantissa bits under exponent 0 give a value in [1, 2); minus 1 is
 * uniform in [0, 1), TF's Uint16ToHalf (and bfloat16's likewise). */
static inline float u16_to_half_f(uint32_t x) { /* value of half(1.m) - 1 */
  return dfx__f16_to_f32((uint16_t)((15u << 10) | (x & 0x3ffu))) - 1.0f;
}
static inline float u16_to_bf16_f(uint32_t x) {
  return dfx__bf16_to_f32((uint16_t)((127u << 7) | (x & 0x7fu))) - 1.0f;
}

static void store_f(dfx_tensor *t, int64_t i, double v) {
  switch ((dfx_dtype)t->dtype) {
    case DFX_F32: ((float *)t->data)[i] = (float)v; break;
    case DFX_F64: ((double *)t->data)[i] = v; break;
    case DFX_F16: ((uint16_t *)t->data)[i] = dfx__f32_to_f16((float)v); break;
    case DFX_BF16: ((uint16_t *)t->data)[i] = dfx__f32_to_bf16((float)v); break;
    default: break;
  }
}

enum { UNIFORM, NORMAL, TRUNCATED };

/* One group of outputs from the generator: 4 (float-like) or 2 (double). */
static int draw_group(philox *g, int kind, dfx_dtype dt, double out[4]) {
  uint32_t s[4];
  if (kind == TRUNCATED) { /* variable samples: single-sample adapter */
    int need = dt == DFX_F64 ? 2 : 4, k = 0;
    while (k < need) {
      double v[2];
      if (dt == DFX_F64) {
        uint32_t a = philox_one(g), b = philox_one(g), c = philox_one(g), d = philox_one(g);
        box_muller_d(a, b, c, d, &v[0], &v[1]);
      } else {
        uint32_t a = philox_one(g), b = philox_one(g);
        float f0, f1;
        box_muller_f(a, b, &f0, &f1);
        v[0] = f0;
        v[1] = f1;
      }
      for (int j = 0; j < 2 && k < need; j++)
        /* TF's TruncatedNormal keeps samples within two standard deviations and
         * draws again for the others. */
        if (fabs(v[j]) < 2.0) out[k++] = v[j];
    }
    return need;
  }
  philox_next(g, s);
  if (dt == DFX_F64) {
    if (kind == UNIFORM) {
      out[0] = u64_to_double(s[0], s[1]);
      out[1] = u64_to_double(s[2], s[3]);
    } else {
      box_muller_d(s[0], s[1], s[2], s[3], &out[0], &out[1]);
    }
    return 2;
  }
  if (kind == UNIFORM) {
    for (int j = 0; j < 4; j++)
      out[j] = dt == DFX_F16 ? u16_to_half_f(s[j]) : dt == DFX_BF16 ? u16_to_bf16_f(s[j]) : u32_to_float(s[j]);
  } else {
    for (int j = 0; j < 4; j += 2) {
      float f0, f1;
      box_muller_f(s[j], s[j + 1], &f0, &f1);
      out[j] = f0;
      out[j + 1] = f1;
    }
  }
  return 4;
}

static dfx_code float_random(dfx_kctx *ctx, int kind) {
  int64_t dims[DFX_MAX_DIMS];
  int nd;
  dfx_code c = dfx__rng_shape(ctx, 0, dims, &nd);
  if (c != DFX_OK) return c;
  dfx_dtype dt = dfx__attr_type(ctx->node, "dtype", DFX_F32);
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, nd, dims);
  if (!out) return ctx->st->code;
  int64_t n = out->count;
  /* 256 counters per output, as TF reserves: the next run starts where
   * TF's would, however many samples this run really drew. */
  philox base = dfx__rng_reserve(ctx->state, (uint64_t)n * 256);
  /* One counter gives four 32-bit samples: four floats (or halves), or two
   * doubles of 64 bits each, TF's group sizes. */
  int group = dt == DFX_F64 ? 2 : 4;
  philox g = base;
  for (int64_t gi = 0, i = 0; i < n; gi++) {
    if ((c = misc_poll(ctx, i)) != DFX_OK) return c; /* i steps by the group size, a power of two */
    if (kind == TRUNCATED) { /* each group restarts at its reserved region */
      g = base;
      philox_skip(&g, (uint64_t)gi * (uint64_t)(group * 256 / 4));
      g.used = 4;
    }
    double v[4];
    draw_group(&g, kind, dt, v);
    for (int j = 0; j < group && i < n; j++, i++) store_f(out, i, v[j]);
  }
  return DFX_OK;
}

static dfx_code uniform_kernel(dfx_kctx *ctx) { return float_random(ctx, UNIFORM); }
static dfx_code normal_kernel(dfx_kctx *ctx) { return float_random(ctx, NORMAL); }
static dfx_code truncated_kernel(dfx_kctx *ctx) { return float_random(ctx, TRUNCATED); }

static dfx_code uniform_int_kernel(dfx_kctx *ctx) {
  int64_t dims[DFX_MAX_DIMS];
  int nd;
  char b[64];
  dfx_code c = dfx__rng_shape(ctx, 0, dims, &nd);
  if (c != DFX_OK) return c;
  const dfx_tensor *lo_t = ctx->in[1], *hi_t = ctx->in[2];
  if (lo_t->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "minval must be 0-D, got shape %s", DFX_SHAPE_STR(lo_t, b));
  if (hi_t->ndims != 0) return dfx__kctx_fail(ctx, DFX_EINVAL, "maxval must be 0-D, got shape %s", DFX_SHAPE_STR(hi_t, b));
  dfx_dtype dt = (dfx_dtype)lo_t->dtype;
  dfx_tensor *out = dfx__kctx_alloc(ctx, 0, dt, nd, dims);
  if (!out) return ctx->st->code;
  int64_t n = out->count;
  if (n == 0) return DFX_OK;
  int64_t lo = dfx__tensor_get_i64(lo_t, 0), hi = dfx__tensor_get_i64(hi_t, 0);
  if (lo >= hi) return dfx__kctx_fail(ctx, DFX_EINVAL, "Need minval < maxval: %lld >= %lld", (long long)lo, (long long)hi);
  philox g = dfx__rng_reserve(ctx->state, (uint64_t)n * 256);
  uint32_t s[4];
  /* Chunks of the poll grain (a multiple of 4) keep the sample pattern. */
  for (int64_t i0 = 0; i0 < n; i0 += MISC_POLL_MASK + 1) {
    if ((c = dfx__kctx_poll(ctx)) != DFX_OK) return c;
    int64_t end = n - i0 > MISC_POLL_MASK ? i0 + MISC_POLL_MASK + 1 : n;
    if (dt == DFX_I32) {
      /* The range in unsigned arithmetic (hi - lo may not fit the signed type);
       * a sample modulo the range, with TF's slight bias. */
      uint32_t range = (uint32_t)hi - (uint32_t)lo;
      for (int64_t i = i0; i < end; i++) {
        if ((i & 3) == 0) philox_next(&g, s);
        ((int32_t *)out->data)[i] = (int32_t)((uint32_t)lo + s[i & 3] % range);
      }
    } else {
      uint64_t range = (uint64_t)hi - (uint64_t)lo;
      for (int64_t i = i0; i < end; i++) {
        if ((i & 1) == 0) philox_next(&g, s);
        uint64_t bits = s[2 * (i & 1)] | (uint64_t)s[2 * (i & 1) + 1] << 32;
        ((int64_t *)out->data)[i] = (int64_t)((uint64_t)lo + bits % range);
      }
    }
  }
  return DFX_OK;
}

/* Fisher-Yates over dim 0, drawing like TF (single samples modulo i + 1).
 * Like TF, a tensor of at most one element is returned as is: rows of a
 * zero-size tensor are not visited, however long its dim 0. */
static dfx_code shuffle_kernel(dfx_kctx *ctx) {
  const dfx_tensor *in = ctx->in[0];
  if (in->count <= 1 || in->dims[0] <= 1) {
    dfx__kctx_forward(ctx, 0, 0);
    return DFX_OK;
  }
  int64_t n = in->dims[0], row = in->count / n;
  int64_t *perm = dfx__malloc(sizeof(int64_t) * (size_t)n);
  if (!perm) return dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  for (int64_t i = 0; i < n; i++) perm[i] = i;
  uint64_t samples = (uint64_t)(n - 1);
  philox g = dfx__rng_reserve(ctx->state, (samples + 3) / 4);
  dfx_code c = DFX_OK;
  for (int64_t i = n - 1; i > 0 && c == DFX_OK; i--) {
    int64_t j;
    /* One 32-bit sample per draw while that can index every row, two beyond. */
    if (n < ((int64_t)1 << 32)) {
      j = (int64_t)(philox_one(&g) % (uint32_t)(i + 1));
    } else {
      uint64_t lo = philox_one(&g), hi = philox_one(&g);
      j = (int64_t)((lo | hi << 32) % (uint64_t)(i + 1));
    }
    int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
    c = misc_poll(ctx, i);
  }
  dfx_tensor *out = c == DFX_OK ? dfx__kctx_alloc(ctx, 0, (dfx_dtype)in->dtype, in->ndims, in->dims) : NULL;
  if (c == DFX_OK && !out) c = ctx->st->code;
  /* Rows are copied in blocks of the poll grain (or one row when rows are longer). */
  int64_t block = row > MISC_POLL_MASK ? 1 : (MISC_POLL_MASK + 1) / row;
  for (int64_t i = 0; c == DFX_OK && i < n; i++) {
    if (i % block == 0) c = dfx__kctx_poll(ctx);
    if (c == DFX_OK && !dfx__misc_copy_elems(out, i * row, in, perm[i] * row, row))
      c = dfx__kctx_fail(ctx, DFX_ENOMEM, "out of memory");
  }
  dfx__free(perm);
  return c;
}

#define FLOAT_RANDOM "dtype: {half, bfloat16, float, double}; T: " MISC_SHAPE_TYPES

static const dfx_kernel_def kernels[] = {
    {"RandomUniform", FLOAT_RANDOM, uniform_kernel, DFX_KERNEL_STATEFUL, dfx__rng_init, dfx__rng_fini},
    {"RandomStandardNormal", FLOAT_RANDOM, normal_kernel, DFX_KERNEL_STATEFUL, dfx__rng_init, dfx__rng_fini},
    {"TruncatedNormal", FLOAT_RANDOM, truncated_kernel, DFX_KERNEL_STATEFUL, dfx__rng_init, dfx__rng_fini},
    {"RandomUniformInt", "Tout: {int32, int64}; T: " MISC_SHAPE_TYPES, uniform_int_kernel, DFX_KERNEL_STATEFUL,
     dfx__rng_init, dfx__rng_fini},
    /* Rows are copied whole; resource handles are plain pointers. */
    {"RandomShuffle", "T: {" MISC_NUM_TYPES ", string, resource}", shuffle_kernel, DFX_KERNEL_STATEFUL, dfx__rng_init,
     dfx__rng_fini},
    {NULL}};

void dfx__kernels_misc_random(dfx_registry *r);
void dfx__kernels_misc_random(dfx_registry *r) { dfx__kernels_add(r, kernels); }
