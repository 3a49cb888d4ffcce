#!/usr/bin/env bash
# Recipes at scale (docs/scale.md): RANKS synthetic per-rank traces (tests/mktrace: steps,
# NCCL kernels, copies, API calls; about 2 records per kernel), then `python3 -m gputrace
# recipe step-time` over them on a LocalCluster of 1 and of 2 workers: wall time and each
# worker's peak RSS; then the same traces through `gputrace stats --by rank` (one process),
# whose figures the recipe must equal. Runs on the machine that benchmarks.
# Usage: bench/scale.sh BUILD_DIR DIR [RANKS [KERNELS_PER_RANK [PYTHON]]]
#   SCALE_WORKERS  the cluster sizes to run, default "1 2" (the comparison reads out-2)
#   the issue's size: bench/scale.sh build /data/scale 64 5000000   (64 x 10 M records)
set -eu
build=$(realpath "$1")
dir=$2
ranks=${3:-64}
kernels=${4:-5000000}
python=${5:-python3}
src=$(dirname "$(realpath "$0")")/..
mkdir -p "$dir/traces"
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
export GPUTRACE_LIB=$build/src/format/libgputrace.so.0 PYTHONPATH=$src/python
echo "# $ranks ranks x $kernels kernels, $(nproc) cores, $(uname -r), $(date -u +%FT%TZ)"
t0=$(date +%s.%N)
for ((r = 0; r < ranks; r++)); do
	f=$dir/traces/rank-$(printf %04d "$r").gtrace
	[ -s "$f" ] || "$build/tests/mktrace" -o "$f" --kernels "$kernels" --steps --nccl --memcpy \
		--api --rank "$r" --world "$ranks" --pid $((1000 + r)) --seed $((r + 1)) >/dev/null
done
echo "traces: $(du -sh "$dir/traces" | cut -f1), $(since "$t0") s to write (skipped when there)"
for w in ${SCALE_WORKERS:-1 2}; do
	out=$dir/out-$w
	rm -rf "$out"
	t0=$(date +%s.%N)
	"$python" -m gputrace recipe step-time "$dir/traces" -o "$out" --workers "$w" --memory 2>&1 |
		grep -v 'distributed\.' || true
	echo "workers $w: $(since "$t0") s wall"
done
/usr/bin/time -f "gputrace stats --by rank: %e s wall, peak RSS %M KiB" \
	"$build/cli/gputrace" stats "$dir"/traces/*.gtrace --by rank -r steps,stragglers -f csv \
	-o "$dir/stats.csv"
# the recipe's steps equal the CLI's
sed -n '/^# steps$/,/^$/p' "$dir/stats.csv" | sed '1d;/^$/d' >"$dir/cli-steps.csv"
if cmp -s "$dir/cli-steps.csv" "$dir/out-2/steps.csv"; then
	n=$(($(wc -l <"$dir/cli-steps.csv") - 1))
	echo "steps.csv equals gputrace stats's steps section ($n steps)"
else
	echo "steps.csv DIFFERS from gputrace stats's steps section"
	exit 1
fi
