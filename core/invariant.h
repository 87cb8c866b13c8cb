/* invariant.h - DFX_ASSERT: checks of the library's own invariants.
 * Active in debug builds (meson's default debugoptimized, and the sanitizer
 * builds), compiled out in release builds (NDEBUG). Never use it on anything
 * a user controls (graphs, feeds, shapes, API arguments): those get a
 * dfx_code and a message. A failed assertion means a bug in dfexec; it
 * prints where and aborts, so the tests and fuzzers catch it at the source
 * instead of as a wrong answer later. */
#ifndef DFX_INVARIANT_H
#define DFX_INVARIANT_H

#ifdef NDEBUG
#define DFX_ASSERT(cond) ((void)0)
#else
void dfx__assert_fail(const char *cond, const char *file, int line) __attribute__((noreturn, cold));
#define DFX_ASSERT(cond) (__builtin_expect(!!(cond), 1) ? (void)0 : dfx__assert_fail(#cond, __FILE__, __LINE__))
#endif

#endif
