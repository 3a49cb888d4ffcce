#!/usr/bin/env bash
# libgputrace as its users get it: `meson install --destdir` into a scratch directory, then
# pkg-config (PKG_CONFIG_PATH and PKG_CONFIG_SYSROOT_DIR pointing there) builds
# examples/kernel-durations.c against the installed headers and library, which must print every
# kernel of a real trace exactly as `gputrace export -f csv` sees it; examples/
# kernel_durations.py (ctypes) must print the same, where python3 exists. Also checks what is
# installed: the soname and its links, exactly the documented functions exported (nm -D against
# the installed headers), the CLI linked against the library and finding it from its own
# directory, and the injection library still self-contained.
# Usage: [GT_SANITIZE=address,...] lib-install.sh MESON BUILD_DIR SOURCE_DIR [PYTHON3]
# (GT_SANITIZE: the build's b_sanitize; the example is then built with it, and python3 left out)
set -u
meson=$1
build=$(realpath "$2")
src=$(realpath "$3")
python=${4:-}
sanitize=${GT_SANITIZE:-}
cflags=()
if [ -n "$sanitize" ]; then
	cflags=("-fsanitize=$sanitize")
	python=
fi
trace=$src/tests/data/example.gtrace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
cd "$tmp" || exit 1
root=$tmp/root

expect_rc 0 "$meson" install -C "$build" --destdir "$root" --no-rebuild --quiet
[ -s "$tmp/err" ] && echo "meson install said: $(cat "$tmp/err")"
pc=$(find "$root" -name gputrace.pc)
[ "$(wc -l <<<"$pc")" -eq 1 ] && [ -n "$pc" ] || { fail "gputrace.pc installed: [$pc]"; cli_done lib-install; }
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$root
unset PKG_CONFIG_LIBDIR
# (pkg-config puts the sysroot in front of the paths it gives)
lib=$(pkg-config --variable=libdir gputrace)
inc=$(pkg-config --variable=includedir gputrace)
[ "${lib#"$root"/}" != "$lib" ] && [ "${inc#"$root"/}" != "$inc" ] ||
	fail "pkg-config variables: '$lib' '$inc'"
expect_rc 0 pkg-config --cflags --libs gputrace
out=$(echo $(cat "$tmp/out"))
[ "$out" = "-I$inc -L$lib -lgputrace" ] || fail "pkg-config --cflags --libs gputrace: [$out]"
expect_rc 0 pkg-config --modversion gputrace
expect_out "$(sed -n "s/^ *version : '\(.*\)',$/\1/p" "$src/meson.build" | head -n 1)"

# every header of include/gputrace/ is installed, and only those: it holds the public API
want_h=$(cd "$src/include/gputrace" && ls)
have_h=$(cd "$inc/gputrace" && ls)
[ "$want_h" = "$have_h" ] ||
	fail "headers: include/gputrace has [$(echo $want_h)], installed [$(echo $have_h)]"

# the library, its soname and links
[ -f "$lib/libgputrace.so.0.1.0" ] && [ -L "$lib/libgputrace.so.0" ] && [ -L "$lib/libgputrace.so" ] ||
	fail "installed: $(ls -l "$lib" | grep gputrace)"
soname=$(readelf -d "$lib/libgputrace.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libgputrace.so.0" ] || fail "soname [$soname]"

# exactly the functions the installed headers declare are exported (the inline one aside)
declared=$(cat "$inc/gputrace/trace.h" "$inc/gputrace/record.h" |
	grep -v '^static inline' | sed -nE 's/^[a-z][a-z0-9_ ]*[ *](gt_[a-z0-9_]+)\(.*/\1/p' |
	sort -u)
exported=$(nm -D --defined-only "$lib/libgputrace.so" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
	sort -u)
[ "$(wc -l <<<"$declared")" -ge 20 ] || fail "too few declarations found: $declared"
[ "$declared" = "$exported" ] ||
	fail "exported vs declared: $(diff <(echo "$declared") <(echo "$exported") | grep '^[<>]' | tr '\n' ' ')"
others=$(nm -D --defined-only "$lib/libgputrace.so" | awk '$2 != "T" && $2 != "A"')
[ -z "$others" ] || fail "other symbols exported: $others"

# the example, built as a user builds it
# shellcheck disable=SC2046
expect_rc 0 cc -std=c11 -Wall -Wextra -Werror "${cflags[@]}" -o kernel-durations \
	"$src/examples/kernel-durations.c" $(pkg-config --cflags --libs gputrace)
readelf -d kernel-durations | grep -q 'NEEDED.*\[libgputrace.so.0\]' ||
	fail "kernel-durations is not linked against libgputrace.so.0"
expect_rc 0 env LD_LIBRARY_PATH="$lib" ./kernel-durations "$trace"
cp "$tmp/out" c.txt
# what the CLI sees in the same trace: duration and mangled name of each kernel, file order
expect_rc 0 "$build/cli/gputrace" export "$trace" -f csv --mangled -q -o ref
want=$(tail -n +2 ref-kernel.csv | tr -d '\r' |
	awk -F, '{ d = $3 - $2; n++; t += d; print d " ns " $9 } END { print n " kernels, " t " ns" }')
[ "$(cat c.txt)" = "$want" ] || fail "kernel-durations: $(diff <(echo "$want") c.txt | head -n 5)"
[ "$(tail -n 1 c.txt)" = "80 kernels, 375364 ns" ] || fail "kernel-durations: $(tail -n 1 c.txt)"
expect_rc 1 env LD_LIBRARY_PATH="$lib" ./kernel-durations "$tmp/missing.gtrace"
expect_err "$tmp/missing.gtrace: No such file or directory"

# Python through ctypes, where it exists
if [ -n "$python" ]; then
	expect_rc 0 "$python" "$src/examples/kernel_durations.py" "$trace" "$lib/libgputrace.so.0"
	[ "$(cat "$tmp/out")" = "$want" ] ||
		fail "kernel_durations.py: $(diff <(echo "$want") "$tmp/out" | head -n 5)"
	expect_rc 0 env LD_LIBRARY_PATH="$lib" "$python" "$src/examples/kernel_durations.py" "$trace"
	[ "$(cat "$tmp/out")" = "$want" ] || fail "kernel_durations.py, library found by name"
else
	echo "lib-install: no python3 (or a sanitized build); the ctypes example is not tested"
fi

# the Python module: installed as a package of python/gputrace, its _config.py naming the
# installed library; with numpy and pandas, examples/kernel_durations_pandas.py prints the same
modpython=${GT_MODULE_PYTHON:-}
[ -n "$sanitize" ] && modpython=
if [ -n "$modpython" ]; then
	init=$(find "$root" -path '*/gputrace/__init__.py')
	[ "$(wc -l <<<"$init")" -eq 1 ] && [ -n "$init" ] || fail "gputrace/__init__.py installed: [$init]"
	pkg=$(dirname "$init")
	for f in __main__.py recipes.py _config.py; do
		[ -f "$pkg/$f" ] || fail "gputrace/$f not installed"
	done
	grep -q "^LIBGPUTRACE = \"${lib#"$root"}/libgputrace.so.0\"$" "$pkg/_config.py" ||
		fail "gputrace/_config.py: $(cat "$pkg/_config.py")"
	if "$modpython" -c 'import numpy, pandas' 2>/dev/null; then
		expect_rc 0 env PYTHONPATH="$(dirname "$pkg")" GPUTRACE_LIB="$lib/libgputrace.so.0" \
			"$modpython" "$src/examples/kernel_durations_pandas.py" "$trace"
		[ "$(cat "$tmp/out")" = "$want" ] ||
			fail "kernel_durations_pandas.py: $(diff <(echo "$want") "$tmp/out" | head -n 5)"
	else
		echo "lib-install: $modpython has no numpy or pandas; kernel_durations_pandas.py is not run"
	fi
fi

# the installed CLI uses the library and finds it from its own place (no LD_LIBRARY_PATH)
cli=$(find "$root" -type f -name gputrace -perm -u+x | head -n 1)
readelf -d "$cli" | grep -q 'NEEDED.*\[libgputrace.so.0\]' || fail "gputrace is not linked against libgputrace.so.0"
expect_rc 0 env -u LD_LIBRARY_PATH "$cli" info "$trace"
grep -q '^  kernel       80$' "$tmp/out" || fail "installed gputrace info: $(cat "$tmp/out")"
# the injection library stays self-contained: no libgputrace, two entry points
inject=$(find "$root" -name libgputrace-inject.so | head -n 1)
if [ -n "$inject" ]; then
	! readelf -d "$inject" | grep -q 'libgputrace.so' || fail "libgputrace-inject.so needs libgputrace.so"
	[ "$(nm -D --defined-only "$inject" | awk '$2 == "T" { print $3 }' | tr '\n' ' ')" = \
		"InitializeInjection InitializeInjectionNvtx2 " ] || fail "libgputrace-inject.so exports: $(nm -D --defined-only "$inject")"
fi

cli_done lib-install
