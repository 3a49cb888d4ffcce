#!/usr/bin/env bash
# GPU check of `gputrace run --gpu-metrics` values (issue #32, docs/gpu-metrics.md): the four
# phases of gpumetrics_phases.py (PyTorch) sampled at 10 kHz; per phase, the mean of each metric
# over the samples inside its NVTX range (SQL on GPU_METRICS), against what must hold:
#   matmul: SMs Active >= 80 %, Tensor Active >= 40 %
#   d2d:    DRAM read and DRAM write each within 0.7-1.3x the copy's own bytes/s
#   h2d:    PCIe read or write within 0.7-1.3x the copy's own bytes/s
#   sleep:  SMs Active <= 5 %
# nvidia-smi dmon's utilization over the run is printed beside them (not checked).
# Usage: bash tests/gpu/gpumetrics-values.sh BUILD_DIR [OUT_DIR]
# Prints one line per check, then "N passed, M failed"; exit 1 if any failed, 77 without torch
# or a GPU.
# shellcheck source=torch-check.sh
. "$(dirname "$0")/torch-check.sh"
dmon=
if command -v nvidia-smi >/dev/null; then
	nvidia-smi dmon -s u -d 1 >"$out/dmon.txt" 2>&1 &
	dmon=$!
fi
"$gt" run -q -f --gpu-metrics -o "$out/gm" -- "$py" "$src/gpumetrics_phases.py" \
	>"$out/phases.txt" 2>"$out/run.err"
rc=$?
[ -n "$dmon" ] && kill "$dmon" 2>/dev/null
[ $rc -eq 0 ] && ok "run --gpu-metrics exit 0" || bad "run exit $rc: $(tail -3 "$out/run.err")"
"$gt" info "$out/gm.gtrace" | grep -iE 'gpu_sample|gpu_metric|notice|sampled' >"$out/info.txt"
"$gt" sql -q "$out/gm.gtrace" -f csv "SELECT n.text, m.metricName, avg(g.value), count(*) FROM
	NVTX_EVENTS n JOIN GPU_METRICS g ON g.timestamp BETWEEN n.start AND n.end JOIN
	TARGET_INFO_GPU_METRICS m ON m.typeId = g.typeId AND m.metricId = g.metricId WHERE n.text
	IN ('matmul', 'd2d', 'h2d', 'sleep') GROUP BY 1, 2 ORDER BY 1, 2" | tr -d '\r' >"$out/means.csv"
cat "$out/phases.txt" "$out/info.txt"
sed 's/^/  /' "$out/means.csv"
mean() { awk -F, -v p="$1" -v m="$2" '$1 == p && index($2, m) == 1 { print $3 }' "$out/means.csv"; }
measured() { awk -v p="$1" '$1 == p { print $2 }' "$out/phases.txt"; }
# check NAME VALUE LO HI: LO <= VALUE <= HI
check() {
	if [ -n "$2" ] && awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }'; then
		ok "$1: $2"
	else
		bad "$1: ${2:-no samples} (want $3 to $4)"
	fi
}
check "matmul SMs Active %" "$(mean matmul 'SMs Active')" 80 100.5
check "matmul Tensor Active %" "$(mean matmul 'Tensor Active')" 40 100.5
d=$(measured d2d)
check "d2d DRAM Read / copy bytes/s" "$(awk -v a="$(mean d2d 'DRAM Read')" -v d="$d" \
	'BEGIN { if (a != "" && d > 0) printf "%.3f", a / d }')" 0.7 1.3
check "d2d DRAM Write / copy bytes/s" "$(awk -v a="$(mean d2d 'DRAM Write')" -v d="$d" \
	'BEGIN { if (a != "" && d > 0) printf "%.3f", a / d }')" 0.7 1.3
h=$(measured h2d)
check "h2d max(PCIe Read, Write) / copy bytes/s" "$(awk -v r="$(mean h2d 'PCIe Read')" \
	-v w="$(mean h2d 'PCIe Write')" -v h="$h" \
	'BEGIN { m = r > w ? r : w; if (m != "" && h > 0) printf "%.3f", m / h }')" 0.7 1.3
check "sleep SMs Active %" "$(mean sleep 'SMs Active')" 0 5
[ -s "$out/dmon.txt" ] && { echo "nvidia-smi dmon:"; sed 's/^/  /' "$out/dmon.txt"; }
finish
