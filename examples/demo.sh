#!/bin/sh
# The README's first command ends here: trace the bundled example on a GPU and export it for
# Perfetto, or, on a machine without a GPU, export the bundled real trace instead.
# Usage: demo.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
gputrace="$build/cli/gputrace"
example="$build/examples/gputrace-example"
out="$build/demo"
mkdir -p "$out"

if [ -x "$example" ] && "$gputrace" doctor --quiet >/dev/null 2>&1; then
	"$gputrace" run -f -o "$out/example.gtrace" --export perfetto -- "$example"
	echo "trace: $out/example.gtrace"
	echo "open $out/example.pftrace at https://ui.perfetto.dev (Open trace file)"
else
	echo "no usable GPU here (see '$gputrace doctor'): exporting the bundled H200 trace instead"
	"$gputrace" export "$src/tests/data/example.gtrace" -f perfetto -o "$out/example.pftrace"
	"$gputrace" stats "$src/tests/data/example.gtrace" --report kernels
	echo "open $out/example.pftrace at https://ui.perfetto.dev (Open trace file)"
fi
