#!/usr/bin/env bash
# GPU check of `gputrace run --backtrace python` with real PyTorch (not in the GPU suite's list
# yet): tests/gpu/torch_train.py traced with --backtrace python, then
#  1. the run exits 0 and the trace has Python frames (pycode records);
#  2. per function of torch_train.py, the kernels launched from there by `stats --by source` (the
#     user's frame: torch's own frames passed over) equal the kernels whose launch the PyTorch
#     profiler's with_stack=True shows inside that function over the same program
#     (torch_prof_lines.py);
#  3. bytes per kernel with stacks: the trace's size with and without --backtrace python over
#     its kernels;
#  4. advise names a place of torch_train.py for its findings that have launches.
# Usage: bash tests/gpu/pystack.sh BUILD_DIR [OUT_DIR]
# Prints one line per check, then "N passed, M failed"; exit 1 if any failed, 77 without torch
# or a GPU.
# shellcheck source=torch-check.sh
. "$(dirname "$0")/torch-check.sh"

# 1. the run and its frames
# --graph node: the CUDA graph's kernels one by one, as the profiler reports them
"$gt" run -q -f --graph node --backtrace python -o "$out/py" -- "$py" "$src/torch_train.py" \
	>"$out/py.out" 2>"$out/py.err"
rc=$?
[ $rc -eq 0 ] && ok "run --backtrace python exit 0" || bad "run exit $rc: $(tail -3 "$out/py.err")"
"$gt" run -q -f --graph node -o "$out/plain" -- "$py" "$src/torch_train.py" >/dev/null 2>&1
"$gt" info "$out/py.gtrace" >"$out/py.info" 2>&1
grep -qE '^  pycode +[1-9]' "$out/py.info" && ok "Python code objects recorded" ||
	bad "no pycode records: $(cat "$out/py.info")"

# 2. the kernels per function of torch_train.py, against the PyTorch profiler's with_stack (its
#    Python slices name functions, not lines); the lines gputrace gives are printed
"$py" "$src/torch_prof_lines.py" "$src/torch_train.py" >"$out/prof.funcs" 2>"$out/prof.err" ||
	bad "the profiler's run: $(tail -3 "$out/prof.err")"
"$gt" stats --by source "$out/py.gtrace" -f csv -o "$out/source.csv" 2>"$out/source.err"
awk -F, '/^# source_lines/ {s = 1; next} /^#/ {s = 0} s && $7 ~ /torch_train\.py$/ {print $8, $2}' \
	"$out/source.csv" | sort -n >"$out/gt.lines"
awk -F, '/^# source_functions/ {s = 1; next} /^#/ {s = 0}
	s && $7 ~ /torch_train\.py$/ && $2 > 0 {print $8, $2}' "$out/source.csv" | sort >"$out/gt.funcs"
grep -v '^None ' "$out/prof.funcs" | sort >"$out/prof.known"
if [ -s "$out/prof.known" ] && cmp -s "$out/gt.funcs" "$out/prof.known"; then
	ok "kernels per function equal the profiler's: $(tr '\n' ';' <"$out/gt.funcs")" \
		"(lines: $(awk '$2 > 0' "$out/gt.lines" | tr '\n' ';'))"
else
	bad "kernels per function: gputrace [$(tr '\n' ';' <"$out/gt.funcs")] profiler" \
		"[$(tr '\n' ';' <"$out/prof.funcs")] $(tail -1 "$out/prof.err")"
fi
"$gt" sql "$out/py.gtrace" -f csv "SELECT count(*) AS calls, count(callchainId) AS with_stack
	FROM CUPTI_ACTIVITY_KIND_RUNTIME" | tr -d '\r' | tail -n 1 | sed 's/^/API calls, with a stack: /'

# 3. bytes per kernel
k=$("$gt" sql "$out/py.gtrace" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL" -f csv | tr -d '\r' | tail -1)
a=$(stat -c %s "$out/py.gtrace")
b=$(stat -c %s "$out/plain.gtrace")
if [ "${k:-0}" -gt 0 ]; then
	ok "bytes: $a with stacks, $b without, $k kernels: $(awk -v a="$a" -v b="$b" -v k="$k" \
		'BEGIN { printf "%.1f", (a - b) / k }') more per kernel"
else
	bad "no kernels in the trace"
fi

# 4. advise names places in torch_train.py
"$gt" advise "$out/py.gtrace" >"$out/advise.txt" 2>&1
grep -q 'Code: .*torch_train\.py(' "$out/advise.txt" && ok "advise names torch_train.py lines" ||
	bad "advise names no torch_train.py line: $(grep 'Code:' "$out/advise.txt" | head -3)"

finish
