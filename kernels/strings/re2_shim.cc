/* re2_shim.cc - RE2 behind a C interface (re2_shim.h). Kept tiny: every
 * C++ exception stops here and becomes an error code. Symbols are hidden,
 * as the rest of the library's internals are. */
#include <re2/re2.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#pragma GCC visibility push(hidden)

#include "re2_shim.h"

extern "C" void *dfx__malloc(size_t n);

struct dfx_re2 {
  RE2 re;
  dfx_re2(const char *pat, size_t len, const RE2::Options &o) : re(re2::StringPiece(pat, len), o) {}
};

extern "C" dfx_re2 *dfx__re2_new(const char *pat, size_t len, char *err, size_t errlen) {
  try {
    RE2::Options o;
    o.set_log_errors(false);
    dfx_re2 *r = new dfx_re2(pat ? pat : "", len, o);
    if (r->re.ok()) return r;
    std::snprintf(err, errlen, "%s", r->re.error().c_str());
    delete r;
  } catch (...) {
    std::snprintf(err, errlen, "out of memory");
  }
  return nullptr;
}

extern "C" void dfx__re2_free(dfx_re2 *re) { delete re; }

extern "C" int dfx__re2_replace(const dfx_re2 *re, const char *text, size_t len, const char *rewrite, size_t rwlen,
                                int global, char **out, size_t *outlen) {
  try {
    std::string s;
    s.assign(text ? text : "", len);
    re2::StringPiece rw(rewrite ? rewrite : "", rwlen);
    bool hit = global ? RE2::GlobalReplace(&s, re->re, rw) > 0 : RE2::Replace(&s, re->re, rw);
    if (!hit) return 0;
    *outlen = s.size();
    *out = nullptr;
    if (s.empty()) return 1;
    if (!(*out = static_cast<char *>(dfx__malloc(s.size())))) return -1;
    std::memcpy(*out, s.data(), s.size());
    return 1;
  } catch (...) {
    return -1;
  }
}

#pragma GCC visibility pop
