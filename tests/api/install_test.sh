#!/bin/sh
# install_test.sh BUILD SOURCE PREFIX LIBDIR SANITIZE CONFORMANCE_DIR
# Installs the build into a temporary DESTDIR and builds the examples the way
# a user would, with the system cc and pkg-config only: once against the
# shared library and once against libdfexec.a (pkg-config --static, which
# exercises Requires.private / Libs.private). Then runs them, including the
# conformance graph simplewhile_0 when it is present.
set -eu
build=$1 src=$2 prefix=$3 libdir=$4 san=$5 conf=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
case $libdir in /*) ;; *) libdir=$prefix/$libdir ;; esac

meson install -C "$build" --destdir "$root" --no-rebuild --quiet >/dev/null
for f in "$libdir/libdfexec.so" "$libdir/libdfexec.a" "$libdir/pkgconfig/dfexec.pc" "$prefix/include/dfexec.h"; do
  [ -e "$root$f" ] || { echo "install_test: $f was not installed" >&2; exit 1; }
done
# Only the public header is installed.
n=$(find "$root" -name '*.h' | wc -l)
[ "$n" -eq 1 ] || { echo "install_test: $n headers installed, expected 1" >&2; exit 1; }

# The manual page, covering every command `dfexec --help` lists.
man=$(find "$root" -path '*/man1/dfexec.1')
[ -n "$man" ] || { echo "install_test: dfexec.1 was not installed" >&2; exit 1; }
for cmd in run info bench optimize dot convert grad ckpt partition ops; do
  grep -q "^\.B $cmd\$" "$man" || { echo "install_test: dfexec.1 does not describe '$cmd'" >&2; exit 1; }
done

# The .pc as installed, moved to where the files really are now.
mkdir -p "$tmp/pc"
sed "s|^prefix=.*|prefix=$root$prefix|" "$root$libdir/pkgconfig/dfexec.pc" > "$tmp/pc/dfexec.pc"
export PKG_CONFIG_PATH="$tmp/pc"
echo "pkg-config dfexec $(pkg-config --modversion dfexec): $(pkg-config --cflags --libs dfexec)"
echo "static: $(pkg-config --static --libs dfexec)"
# dfexec.h needs nothing but its own directory: no dependency's include
# directories or defines may reach a user's compile line.
cflags=$(pkg-config --cflags dfexec)
[ "$cflags" = "-I$root$prefix/include" ] || [ "$cflags" = "-I$root$prefix/include " ] ||
  { echo "install_test: pkg-config --cflags dfexec leaks '$cflags'" >&2; exit 1; }

extra=""
[ "$san" = none ] || extra="-fsanitize=$san"
cc=${CC:-cc}
# Shared: plain `cc prog.c $(pkg-config --cflags --libs dfexec)`.
$cc -std=c11 -Wall -Wextra -Werror $extra "$src/examples/load_run.c" -o "$tmp/load_run" \
  $(pkg-config --cflags --libs dfexec)
$cc -std=c11 -Wall -Wextra -Werror $extra "$src/examples/while_loop.c" -o "$tmp/while_loop" \
  $(pkg-config --cflags --libs dfexec)
# Static: the same, with the archive chosen over the .so.
$cc -std=c11 -Wall -Wextra -Werror $extra "$src/examples/while_loop.c" -o "$tmp/while_loop_static" \
  $(pkg-config --cflags dfexec) $(pkg-config --static --libs dfexec | sed 's/-ldfexec\b/-l:libdfexec.a/')
if ldd "$tmp/while_loop_static" | grep -q libdfexec; then
  echo "install_test: the static build still needs libdfexec.so" >&2
  exit 1
fi

export LD_LIBRARY_PATH="$root$libdir"
ldd "$tmp/load_run" | grep -q "$root$libdir/libdfexec.so" ||
  { echo "install_test: load_run does not use the installed library" >&2; ldd "$tmp/load_run" >&2; exit 1; }
out=$("$tmp/while_loop" "$tmp/loop.pb" 2 5)
echo "$out"
echo "$out" | grep -q "result = 64"
out=$(env -u LD_LIBRARY_PATH "$tmp/while_loop_static" "$tmp/loop2.pbtxt" 1 3)
echo "$out"
echo "$out" | grep -q "result = 8"
out=$("$tmp/load_run" "$tmp/loop2.pbtxt" result x=0.25 n=4)
echo "$out"
echo "$out" | grep -q "result: float32 \[\] = 4"
g=$conf/tf1/simplewhile_0
if [ -f "$g/frozen_model.pb" ]; then
  x=$(tr '\n' ',' < "$g/input_0.placeholder.csv" | sed 's/,$//')
  out=$("$tmp/load_run" "$g/frozen_model.pb" output "input_0=$x" "input_1=$(cat "$g/input_1.placeholder.csv")")
  echo "$out"
  echo "$out" | grep -q "output: float32 \[2,2\] = 3 4 5 6"
fi
echo "install_test: ok"
