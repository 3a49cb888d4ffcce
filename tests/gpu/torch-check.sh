# The start of the PyTorch GPU checks (pystack.sh, pytorch-ops.sh, gpumetrics-values.sh),
# sourced by each with its arguments: BUILD_DIR [OUT_DIR]. Sets build, out, py (PYTHON or
# python3), src (tests/gpu), gt (the build's CLI); ok and bad count and print a check's
# verdict, finish prints the tally and returns 1 if any failed. Exits 77 without torch or a
# GPU.
set -u
build=$(realpath "$1")
out=${2:-$(mktemp -d)}
py=${PYTHON:-python3}
src=$(realpath "$(dirname "${BASH_SOURCE[0]}")")
gt="$build/cli/gputrace"
mkdir -p "$out"
pass=0
failn=0
ok() { echo "PASS $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; failn=$((failn + 1)); }
finish() {
	echo "$pass passed, $failn failed"
	[ "$failn" -eq 0 ]
}

"$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 77)' 2>/dev/null ||
	{ echo "no torch or no GPU: skipping"; exit 77; }
