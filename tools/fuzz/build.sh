#!/usr/bin/env bash
# build.sh - configure and build the libFuzzer targets with clang.
#   tools/fuzz/build.sh [builddir]     (default: build-fuzz)
# The whole library is instrumented (coverage + ASan + UBSan, UB aborts);
# warnings are not errors here because clang's set differs from gcc's, which
# the normal build enforces.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-fuzz}
if [ ! -d "$dir" ]; then
  # clang++ too: the RE2 shim is C++, so the C++ compiler links the targets;
  # MPI off, as nothing here needs it.
  CC=clang CXX=clang++ meson setup "$dir" -Dfuzz=true -Dwerror=false -Dbuildtype=debugoptimized -Dmpi=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args='-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer' >/dev/null
fi
ninja -C "$dir" -j"${JOBS:-2}" tools/fuzz/fuzz_import_bin tools/fuzz/fuzz_import_text tools/fuzz/fuzz_run
