/* test_hash.c - Fingerprint64 against published values (TensorFlow's
 * fingerprint test, Guava's FarmHashFingerprint64Test and its port in the
 * Airship SDK, which cover every length class of farmhashna::Hash64) and
 * StringToHashBucketFast against TF's own test (['a','b','c','d'] into 10
 * buckets gives [9, 2, 2, 5]). */
#include "stest.h"
#include "strings/sutil.h"

TestSuite(hash, .init = st_setup, .fini = st_teardown, .timeout = 30);

static uint64_t fp(const char *s) { return dfx__s_fingerprint64(s, strlen(s)); }

Test(hash, fingerprint64_published_values) {
  static const struct {
    const char *s;
    uint64_t v;
  } cases[] = {
      /* TensorFlow, tsl/platform/fingerprint_test.cc */
      {"Hello", 15404698994557526151ULL},
      {"World", 18308117990299812472ULL},
      /* TF's StringToHashBucketFast test comments */
      {"a", 12917804110809363939ULL},
      {"b", 11795596070477164822ULL},
      {"c", 11430444447143000872ULL},
      {"d", 4470636696479570465ULL},
      /* Guava / Airship FarmHashFingerprint64Test */
      {"", 11160318154034397263ULL},
      {"Q", 13816109650407654260ULL},
      {",=", 1326014594494455617ULL},
      {"WW5", 6316074107149058620ULL},
      {"e#p8", 252499459662674074ULL},
      {"&QEO\\", 673322083973757863ULL},
      {")D<l91", 6440615040757739207ULL},
      {"P9|0-Xg", 15614415556471156694ULL},
      {"#cDR^sLO", 328147020574120176ULL},
      {"K6Pjv<>ad", 16506019169567922731ULL},
      {"D<wQ1DVVpS", 876767294656777789ULL},
      {"^b2z)XYJ\\95", 3150268469206098298ULL},
      {"?c^6BkI#-SLw", 13133570674398037786ULL},
      {"/dWQW6&i7h$1@", 11452602314494946942ULL},
      {"y2=B@rsu:g9bWU", 2493222351070148393ULL},
      {"5C $WnO2K@:(4#h", 2463546464490189ULL},
      {"bF&d$MYIhB.Ac=qC", 17582099205024456557ULL},
      {"M)(iJ1-nf>5XCc0L?", 9968500208262240300ULL},
      {"xi\\PvQpHpM:$5\\Zh^U", 4169389423472268625ULL},
      {"&&3gRU?[^&ok:He[|K:", 11792583603419566171ULL},
      {"hg[F|$D&hb$,V4OeXHOa", 11873385450325105043ULL},
      {"9JqLl0AW7e69Y.&vMHQ5C", 2827089714349584095ULL},
      {"9>Nleb)=|CR#4=G2&7[HOP", 10511875379468936029ULL},
      {"ZyzWj:&3hH78.WUCNW4e&Z ", 13218358187761524434ULL},
      {"T#e:),mqALpU]hrJ%f.*|=&r", 11789374840096016445ULL},
      {"!/tU|0cMaw=/-Yg)m_*4UNvwB", 14890523890635468863ULL},
      {"!@#$%^&*():=-_][\\|/?.,<> ", 11772040268694734364ULL},
      {"wi=%v]GoIPI6zm[Rrgmq]7J?.|", 8222623341199956836ULL},
      {"Ijiq13Mb_Nn]sA^jhM7eZ\\ExAzSJ", 12345582939087509209ULL},
      {"t,SRdW>l=?AH4\\JQ!.A)Wh,O4\\8", 4614517891525318442ULL},
      {"dXB@tDQ-v5<H]rq2Pcc*s>nC-[Mdy", 8365906589669344754ULL},
      {"mC=6Tz,AYH|&n99(G!6LyG&QfZ=1^:", 10432240328043398052ULL},
      {"wE,gHSvhK Jv=KR#(R |!%vctTJ0fx)", 413905253809041649ULL},
      {"n?(o|a[EX|KN-9./=tCVEmN%?<MXe8F<", 1754206644017466002ULL},
      {"7.b^/n=oR_w(vLN?c?xN<5t$p8HY2!s:U", 2506644862971557451ULL},
      {"EsIIjI65<^!j$)V.,!]M]@Q5[$(oyxI_nF", 4212098974972931626ULL},
      {"NXooOPwHej5=c_V0(47=-)N!vNdd:$fMs1B", 5510670329273533446ULL},
      {"ECCD828C-5D7A-4C8B-9A1B-F244747E96C3", 9693850515132481856ULL},
      {"Sl,xx&O^l@=TQ[QI(TJ^aD*PS3.K]@Mk:e)e", 12943788826636368730ULL},
      {"2/?98ns)xbzEVL^:wCS$7l3@_g!zP^<D.-bd6", 9728733090894310797ULL},
      {">EtzDE,xUUZ%!aCvx#vyN(][Q.eRQO2sBZCwFH", 5047171257402399197ULL},
      {"@05Mz\\\\)VhZ\\S&9vVU,egF%sW)IMIGVHE%#I)D|", 134798502762145076ULL},
      {"fDVY|(%&aF#3<l>b?1Y Hqt)qY(0%b@VIk#Rlofs", 1687730506231245221ULL},
      {"F7479877-4690-4A44-AFC9-8FE987EA512F:some_other_id", 6862335115798125349ULL},
      {"optic_acquit:eef25358-6577-4b84-bbcd-82c0f2de80e2", 2791352902118037828ULL},
      {"0376d8dc-a717-425a-9dd2-d4b36bcaddac:65d52a5d-4f88-4a78-97c9-08464d44bbb6", 14340110469024474010ULL},
      {"test", 8581389452482819506ULL},
      {"testtesttesttesttesttesttesttest", (uint64_t)-4196240717365766262LL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    cr_expect_eq(fp(cases[i].s), cases[i].v, "'%s' (%zu bytes): %llu", cases[i].s, strlen(cases[i].s),
                 (unsigned long long)fp(cases[i].s));
  char t256[257] = "";
  for (int i = 0; i < 64; i++) strcat(t256, "test");
  cr_expect_eq(fp(t256), 3500507768004279527ULL);
}

/* Guava's testMultipleLengths: hashes prefixes of a growing buffer of every
 * length up to 3200 and folds them together. */
static uint64_t remix(uint64_t h) {
  h ^= h >> 41;
  return h * 949921979;
}
static uint8_t next_char(uint64_t h) { return (uint8_t)('a' + (h & 0xfffff) % 26); }

Test(hash, fingerprint64_every_length) {
  enum { ITER = 800 };
  static uint8_t buf[ITER * 4];
  size_t len = 0;
  uint64_t h = 0;
  for (int i = 0; i < ITER; i++) {
    h ^= dfx__s_fingerprint64((const char *)buf, (size_t)i);
    h = remix(h);
    buf[len++] = next_char(h);
    h ^= dfx__s_fingerprint64((const char *)buf, (size_t)i * i % len);
    h = remix(h);
    buf[len++] = next_char(h);
    h ^= dfx__s_fingerprint64((const char *)buf, (size_t)i * i * i % len);
    h = remix(h);
    buf[len++] = next_char(h);
    h ^= dfx__s_fingerprint64((const char *)buf, len);
    h = remix(h);
    buf[len++] = next_char(h);
    int x0 = buf[len - 1], x1 = buf[len - 2], x2 = buf[len - 3], x3 = buf[len / 2];
    buf[((size_t)(x0 << 16) + (size_t)(x1 << 8) + (size_t)x2) % len] ^= (uint8_t)x3;
    buf[((size_t)(x1 << 16) + (size_t)(x2 << 8) + (size_t)x3) % len] ^= (uint8_t)(i % 256);
  }
  cr_expect_eq(h, 0x7a1d67c50ec7e167ULL, "%llx", (unsigned long long)h);
}

static dfx_tensor *bucket(dfx_tensor *x, int64_t nb) {
  dfx_node *n = kh_node_new("StringToHashBucketFast");
  kh_attr_int(n, "num_buckets", nb);
  dfx_tensor *o = NULL;
  cr_assert_eq(st_run(n, &x, 1, &o), DFX_OK, "%s", st_err);
  kh_node_free(n);
  return o;
}

Test(hash, to_hash_bucket_fast) {
  const char *v[] = {"a", "b", "c", "d"};
  dfx_tensor *x = st_vec(4, v), *o = bucket(x, 10);
  cr_expect(o->dtype == DFX_I64 && memcmp(o->data, (int64_t[]){9, 2, 2, 5}, 32) == 0);
  dfx__tensor_unref(o);
  o = bucket(x, 1);
  cr_expect(memcmp(o->data, (int64_t[]){0, 0, 0, 0}, 32) == 0);
  dfx__tensor_unref(o);
  /* Unsigned modulo: the bucket of "a" (2^63 < fp) for a bucket count of
   * 2^63 - 1 is fp - (2^63 - 1). */
  o = bucket(x, INT64_MAX);
  cr_expect_eq((uint64_t)((int64_t *)o->data)[0], 12917804110809363939ULL - (uint64_t)INT64_MAX);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  /* Shape kept; strings with NULs hash by bytes. */
  const char *w[] = {"Hello", "World", "", "test"};
  x = st_str(2, (int64_t[]){2, 2}, w);
  o = bucket(x, 1000);
  cr_expect(o->ndims == 2 && memcmp(o->data,
                                    (int64_t[]){(int64_t)(15404698994557526151ULL % 1000),
                                                (int64_t)(18308117990299812472ULL % 1000),
                                                (int64_t)(11160318154034397263ULL % 1000),
                                                (int64_t)(8581389452482819506ULL % 1000)},
                                    32) == 0);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  x = st_bytes("a\0b", 3);
  o = bucket(x, INT64_MAX);
  cr_expect_neq(((int64_t *)o->data)[0], (int64_t)(fp("a") % INT64_MAX));
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
  /* TF's docs: ["Hello", "TensorFlow", "2.x"] into 3 buckets: [0, 2, 2]. */
  const char *doc[] = {"Hello", "TensorFlow", "2.x"};
  x = st_vec(3, doc);
  o = bucket(x, 3);
  cr_expect(memcmp(o->data, (int64_t[]){0, 2, 2}, 24) == 0, "%lld %lld %lld", (long long)((int64_t *)o->data)[0],
            (long long)((int64_t *)o->data)[1], (long long)((int64_t *)o->data)[2]);
  dfx__tensor_unref(o);
  dfx__tensor_unref(x);
}
