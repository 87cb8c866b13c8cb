/* test_bundle.c - TensorFlow's checkpoint format: the TF-written bundles
 * read with their checksums verified and the values their README gives;
 * write -> read round trips of every dtype, strings (empty ones too),
 * scalars and empty tensors, and many entries (several index blocks);
 * corrupt, truncated and incomplete checkpoints refused with messages that
 * name the file and the tensor. */
#include "ctest.h"

TestSuite(bundle, .init = ct_setup, .fini = ct_teardown, .timeout = 60);

Test(bundle, reads_the_tf_written_checkpoint) {
  char prefix[512], idx[600];
  ct_shared(prefix, sizeof prefix, "simple_graph/data-all-1000");
  snprintf(idx, sizeof idx, "%s.index", prefix);
  ct_need(idx);
  dfx_status *st = dfx_status_new();
  dfx_checkpoint *c = NULL;
  cr_assert_eq(dfx_checkpoint_open(prefix, &c, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_checkpoint_count(c), 1);
  cr_assert_str_eq(dfx_checkpoint_name(c, 0), "Variable");
  cr_assert_eq(dfx_checkpoint_dtype(c, 0), DFX_F32);
  int64_t dims[DFX_MAX_DIMS];
  cr_assert_eq(dfx_checkpoint_shape(c, 0, dims), 1);
  cr_assert_eq(dims[0], 4);
  dfx_tensor *t = NULL;
  cr_assert_eq(dfx_checkpoint_read(c, "Variable", &t, st), DFX_OK, "%s", dfx_status_message(st));
  const float *v = dfx_tensor_data(t);
  cr_assert(v[0] == 2 && v[1] == 4 && v[2] == 6 && v[3] == 8, "%g %g %g %g", v[0], v[1], v[2], v[3]);
  dfx_tensor_free(t);
  cr_assert_eq(dfx_checkpoint_read(c, "Varible", &t, st), DFX_ENOTFOUND);
  cr_assert(strstr(dfx_status_message(st), "Key Varible not found"), "%s", dfx_status_message(st));
  dfx_checkpoint_close(c);
  dfx_status_free(st);
}

Test(bundle, reads_the_tf_savedmodel_variables) {
  char prefix[512], idx[600];
  ct_shared(prefix, sizeof prefix, "saved_model_counter/00000123/variables/variables");
  snprintf(idx, sizeof idx, "%s.index", prefix);
  ct_need(idx);
  dfx_status *st = dfx_status_new();
  dfx_checkpoint *c = NULL;
  cr_assert_eq(dfx_checkpoint_open(prefix, &c, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_checkpoint_count(c), 1);
  cr_assert_str_eq(dfx_checkpoint_name(c, 0), "counter");
  dfx_tensor *t = NULL;
  cr_assert_eq(dfx_checkpoint_read(c, "counter", &t, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_tensor_count(t), 1);
  cr_assert_eq(dfx_dtype_size(dfx_tensor_dtype(t)), 4);
  cr_assert_eq(*(const int32_t *)dfx_tensor_data(t), 0); /* zero in any 4-byte dtype */
  dfx_tensor_free(t);
  dfx_checkpoint_close(c);
  dfx_status_free(st);
}

/* ---- round trips ---- */

static dfx_tensor *random_tensor(dfx_dtype dt, int ndims, const int64_t *dims, unsigned seed) {
  dfx_tensor *t = dfx__tensor_alloc(dt, ndims, dims, NULL);
  cr_assert(t);
  srand(seed);
  if (dt == DFX_STRING) {
    dfx_str *s = t->data;
    for (int64_t i = 0; i < t->count; i++) {
      s[i].len = (size_t)(i % 4 == 0 ? 0 : rand() % 300); /* empty strings too; >127 needs 2-byte varints */
      s[i].ptr = s[i].len ? dfx__malloc(s[i].len) : NULL;
      for (size_t k = 0; k < s[i].len; k++) s[i].ptr[k] = (char)(rand() & 0xff);
    }
  } else {
    unsigned char *b = t->data;
    for (size_t k = 0; k < t->nbytes; k++) b[k] = dt == DFX_BOOL ? (unsigned char)(rand() & 1) : (unsigned char)rand();
  }
  return t;
}

static bool same_tensor(const dfx_tensor *a, const dfx_tensor *b) {
  if (a->dtype != b->dtype || !dfx__tensor_same_shape(a, b)) return false;
  if (a->dtype != DFX_STRING) return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
  const dfx_str *x = a->data, *y = b->data;
  for (int64_t i = 0; i < a->count; i++)
    if (x[i].len != y[i].len || (x[i].len && memcmp(x[i].ptr, y[i].ptr, x[i].len))) return false;
  return true;
}

Test(bundle, round_trips_every_dtype_and_shape) {
  enum { MAXT = 128 };
  dfx_tensor *ts[MAXT];
  char *names[MAXT];
  int n = 0;
  static const int64_t shapes[][3] = {{2, 3, 0}, {0, 4, 0}, {0, 0, 0}, {5, 1, 7}};
  static const int ranks[] = {2, 2, 0, 3};
  for (int dt = 1; dt < DFX_DTYPE_END_; dt++) {
    if (dt == DFX_RESOURCE || dt == DFX_VARIANT || !dfx__dtype_valid(dt)) continue;
    for (int s = 0; s < 4; s++) {
      ts[n] = random_tensor((dfx_dtype)dt, ranks[s], shapes[s], (unsigned)(dt * 7 + s));
      names[n] = dfx__malloc(64);
      snprintf(names[n], 64, "%s/shape%d", dfx_dtype_name((dfx_dtype)dt), s);
      n++;
    }
  }
  char prefix[512];
  ct_path(prefix, sizeof prefix, "all");
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_checkpoint_write(prefix, (const char *const *)names, ts, n, st), DFX_OK, "%s",
               dfx_status_message(st));
  dfx_checkpoint *c = NULL;
  cr_assert_eq(dfx_checkpoint_open(prefix, &c, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_checkpoint_count(c), n);
  for (int i = 0; i < n; i++) {
    dfx_tensor *t = NULL;
    cr_assert_eq(dfx_checkpoint_read(c, names[i], &t, st), DFX_OK, "%s: %s", names[i], dfx_status_message(st));
    cr_assert(same_tensor(t, ts[i]), "%s differs after the round trip", names[i]);
    dfx_tensor_free(t);
  }
  /* Listed in name order. */
  for (int i = 1; i < n; i++) cr_assert(strcmp(dfx_checkpoint_name(c, i - 1), dfx_checkpoint_name(c, i)) < 0);
  dfx_checkpoint_close(c);
  for (int i = 0; i < n; i++) {
    dfx__tensor_unref(ts[i]);
    dfx__free(names[i]);
  }
  dfx_status_free(st);
}

Test(bundle, many_entries_span_several_index_blocks) {
  enum { N = 600 };
  char prefix[512];
  ct_path(prefix, sizeof prefix, "many");
  dfx_tensor *ts[N];
  char *names[N];
  for (int i = 0; i < N; i++) {
    float v = (float)i;
    ts[i] = dfx__tensor_scalar(DFX_F32, &v);
    names[i] = dfx__malloc(64);
    /* Long shared prefixes exercise the key compression. */
    snprintf(names[i], 64, "model/layer_%03d/kernel/Adam_%d", i % 97, i);
  }
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_checkpoint_write(prefix, (const char *const *)names, ts, N, st), DFX_OK, "%s",
               dfx_status_message(st));
  dfx_checkpoint *c = NULL;
  cr_assert_eq(dfx_checkpoint_open(prefix, &c, st), DFX_OK, "%s", dfx_status_message(st));
  cr_assert_eq(dfx_checkpoint_count(c), N);
  for (int i = 0; i < N; i += 37) {
    dfx_tensor *t = NULL;
    cr_assert_eq(dfx_checkpoint_read(c, names[i], &t, st), DFX_OK);
    cr_assert_eq(*(const float *)dfx_tensor_data(t), (float)i);
    dfx_tensor_free(t);
  }
  dfx_checkpoint_close(c);
  for (int i = 0; i < N; i++) {
    dfx__tensor_unref(ts[i]);
    dfx__free(names[i]);
  }
  dfx_status_free(st);
}

Test(bundle, data_bytes_match_what_tensorflow_wrote) {
  /* Writing the variable TF saved gives TF's data shard byte for byte. */
  char tfdata[512];
  ct_shared(tfdata, sizeof tfdata, "simple_graph/data-all-1000.data-00000-of-00001");
  ct_need(tfdata);
  float v[4] = {2, 4, 6, 8};
  int64_t d = 4;
  dfx_tensor *t = dfx_tensor_new(DFX_F32, &d, 1);
  memcpy(dfx_tensor_data(t), v, sizeof v);
  char prefix[512], data[600];
  ct_path(prefix, sizeof prefix, "same");
  const char *name = "Variable";
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_checkpoint_write(prefix, &name, &t, 1, st), DFX_OK, "%s", dfx_status_message(st));
  snprintf(data, sizeof data, "%s.data-00000-of-00001", prefix);
  size_t la, lb;
  unsigned char *a = ct_slurp(data, &la), *b = ct_slurp(tfdata, &lb);
  cr_assert(la == lb && memcmp(a, b, la) == 0);
  free(a);
  free(b);
  dfx_tensor_free(t);
  dfx_status_free(st);
}

/* ---- damaged checkpoints ---- */

/* Writes a two-tensor checkpoint at ct_dir/name. */
static void write_two(const char *prefix) {
  float v[3] = {1, 2, 3};
  int64_t d = 3;
  dfx_tensor *ts[2] = {dfx_tensor_new(DFX_F32, &d, 1), dfx_tensor_new(DFX_F32, &d, 1)};
  memcpy(dfx_tensor_data(ts[0]), v, sizeof v);
  memcpy(dfx_tensor_data(ts[1]), v, sizeof v);
  const char *names[2] = {"a", "b"};
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_checkpoint_write(prefix, names, ts, 2, st), DFX_OK, "%s", dfx_status_message(st));
  dfx_tensor_free(ts[0]);
  dfx_tensor_free(ts[1]);
  dfx_status_free(st);
}

/* Opens and reads tensor "b"; returns the first failing code, message in st. */
static dfx_code open_read_b(const char *prefix, dfx_status *st) {
  dfx_checkpoint *c = NULL;
  dfx_code r = dfx_checkpoint_open(prefix, &c, st);
  if (r != DFX_OK) return r;
  dfx_tensor *t = NULL;
  r = dfx_checkpoint_read(c, "b", &t, st);
  dfx_tensor_free(t);
  dfx_checkpoint_close(c);
  return r;
}

Test(bundle, corrupt_data_is_refused_naming_file_and_tensor) {
  char prefix[512], data[600];
  ct_path(prefix, sizeof prefix, "bad");
  write_two(prefix);
  snprintf(data, sizeof data, "%s.data-00000-of-00001", prefix);
  size_t n;
  unsigned char *b = ct_slurp(data, &n);
  b[n - 1] ^= 0x40; /* in tensor b, the second one written */
  ct_spit(data, b, n);
  dfx_status *st = dfx_status_new();
  cr_assert_eq(open_read_b(prefix, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "checksum mismatch for tensor 'b'") &&
                strstr(dfx_status_message(st), "bad.data-00000-of-00001"),
            "%s", dfx_status_message(st));
  /* Truncated: tensor b runs past the end. */
  ct_spit(data, b, n - 2);
  cr_assert_eq(open_read_b(prefix, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "tensor 'b'") && strstr(dfx_status_message(st), "truncated"), "%s",
            dfx_status_message(st));
  free(b);
  dfx_status_free(st);
}

Test(bundle, corrupt_or_truncated_index_is_refused) {
  char prefix[512], index[600];
  ct_path(prefix, sizeof prefix, "badidx");
  write_two(prefix);
  snprintf(index, sizeof index, "%s.index", prefix);
  size_t n;
  unsigned char *b = ct_slurp(index, &n);
  dfx_status *st = dfx_status_new();
  b[3] ^= 0x01; /* inside the first data block */
  ct_spit(index, b, n);
  cr_assert_eq(open_read_b(prefix, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "checksum mismatch") && strstr(dfx_status_message(st), "badidx.index"),
            "%s", dfx_status_message(st));
  b[3] ^= 0x01;
  ct_spit(index, b, n - 10);
  cr_assert_eq(open_read_b(prefix, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "badidx.index"), "%s", dfx_status_message(st));
  ct_spit(index, b, 0);
  cr_assert_eq(open_read_b(prefix, st), DFX_EINVAL);
  free(b);
  dfx_status_free(st);
}

Test(bundle, missing_shard_or_index_is_named) {
  char prefix[512], data[600];
  ct_path(prefix, sizeof prefix, "gone");
  write_two(prefix);
  snprintf(data, sizeof data, "%s.data-00000-of-00001", prefix);
  cr_assert_eq(remove(data), 0);
  dfx_status *st = dfx_status_new();
  cr_assert_eq(open_read_b(prefix, st), DFX_ENOTFOUND);
  cr_assert(strstr(dfx_status_message(st), "gone.data-00000-of-00001") && strstr(dfx_status_message(st), "missing"),
            "%s", dfx_status_message(st));
  ct_path(prefix, sizeof prefix, "never_written");
  cr_assert_eq(open_read_b(prefix, st), DFX_ENOTFOUND);
  cr_assert(strstr(dfx_status_message(st), "never_written.index"), "%s", dfx_status_message(st));
  dfx_status_free(st);
}

Test(bundle, writer_refuses_duplicates_and_leaves_nothing) {
  char prefix[512], index[600];
  ct_path(prefix, sizeof prefix, "dup");
  float v = 1;
  dfx_tensor *t = dfx__tensor_scalar(DFX_F32, &v);
  dfx_tensor *ts[2] = {t, t};
  const char *names[2] = {"x", "x"};
  dfx_status *st = dfx_status_new();
  cr_assert_eq(dfx_checkpoint_write(prefix, names, ts, 2, st), DFX_EINVAL);
  cr_assert(strstr(dfx_status_message(st), "'x' is saved twice"), "%s", dfx_status_message(st));
  snprintf(index, sizeof index, "%s.index", prefix);
  cr_assert_neq(access(index, F_OK), 0, "a failed save left an index behind");
  char cmd[700];
  snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", ct_dir);
  cr_assert_eq(system(cmd), 0, "a failed save left files behind");
  dfx__tensor_unref(t);
  dfx_status_free(st);
}
