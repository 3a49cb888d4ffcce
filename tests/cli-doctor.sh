#!/usr/bin/env bash
# CLI test for `gputrace doctor`: option errors, the injection-library and environment checks,
# and, on a machine without a driver, the clear "no NVIDIA driver" verdict and exit code.
# Usage: cli-doctor.sh PATH/TO/gputrace
set -u
gputrace=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"

no_line_like() {
	if grep -qE -- "$1" "$tmp/out"; then
		fail "unexpected line matching [$1] in: $(cat "$tmp/out")"
	fi
}

unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH LD_PRELOAD
touch "$tmp/libgputrace-inject.so"
lib=$(realpath "$tmp/libgputrace-inject.so")

# Usage errors.
expect_rc 0 "$gputrace" doctor --help
grep -q '^Usage: gputrace doctor \[options\]$' "$tmp/out" || fail "doctor --help: no usage line"
expect_rc 64 "$gputrace" doctor --bogus
expect_err "gputrace: doctor: unknown option '--bogus'; see 'gputrace doctor --help'"
expect_rc 64 "$gputrace" doctor extra
expect_err "gputrace: doctor: unexpected argument 'extra'; it takes none"

# The injection library through GPUTRACE_INJECT_LIB, and another tool's injection.
GPUTRACE_INJECT_LIB=$tmp/libgputrace-inject.so \
CUDA_INJECTION64_PATH=/opt/nvidia/nsight-systems/target-linux-x64/libToolsInjection64.so \
	"$gputrace" doctor >"$tmp/out" 2>"$tmp/err"
rc=$?
out_has_line "gputrace doctor: can this machine trace CUDA programs?"
out_has_line "  ok       injection library: $lib (GPUTRACE_INJECT_LIB)"
out_has_line "  warning  environment: CUDA_INJECTION64_PATH=/opt/nvidia/nsight-systems/target-linux-x64/libToolsInjection64.so injects another tool into CUDA programs"
out_has_line "           fix: nothing for gputrace run, which replaces it for the traced program; unset CUDA_INJECTION64_PATH to run programs without that tool"

if [ -e /proc/driver/nvidia/version ]; then
	echo "an NVIDIA driver is present: the no-driver checks are skipped"
else
	# No driver here: say so, skip what depends on it, and fail.
	[ "$rc" -eq 69 ] || fail "doctor without a driver exited $rc, expected 69"
	grep -q '^  PROBLEM  driver: no NVIDIA driver: libcuda.so.1 cannot be loaded (' "$tmp/out" ||
		fail "no 'no NVIDIA driver' problem in: $(cat "$tmp/out")"
	out_has_line "           fix: install the NVIDIA driver (nvidia-smi must work); in a container, start it with the NVIDIA container toolkit (docker run --gpus all ...)"
	out_has_line "  skipped  GPUs: not checked without a driver"
	out_has_line "  skipped  permission: no /proc/driver/nvidia/params (no NVIDIA kernel module)"
	grep -qE '^result: tracing will not work here until (it is|they are) fixed \([0-9]+ problems? above\)$' \
		"$tmp/out" || fail "no failing result line in: $(cat "$tmp/out")"
	no_line_like '^result: tracing should work'

	# --quiet: only problems and warnings, and the verdict.
	GPUTRACE_INJECT_LIB=$tmp/libgputrace-inject.so "$gputrace" doctor --quiet >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 69 ] || fail "doctor -q exited $rc, expected 69"
	no_line_like '^  (ok|note|skipped) '
	no_line_like '^gputrace doctor: can this machine'
	grep -qE '^gputrace doctor: tracing will not work here until' "$tmp/out" ||
		fail "doctor -q: no verdict in: $(cat "$tmp/out")"
fi

# A wrong GPUTRACE_INJECT_LIB is reported, not silently replaced by another library.
GPUTRACE_INJECT_LIB=$tmp/nope.so "$gputrace" doctor >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 69 ] || fail "doctor with a missing injection library exited $rc, expected 69"
out_has_line "  PROBLEM  injection library: libgputrace-inject.so not found (looked at $tmp/nope.so)"
out_has_line "           fix: point GPUTRACE_INJECT_LIB at libgputrace-inject.so, or unset it"

# Our own library in CUDA_INJECTION64_PATH is standalone mode, not another tool.
GPUTRACE_INJECT_LIB=$lib CUDA_INJECTION64_PATH=$lib "$gputrace" doctor >"$tmp/out" 2>"$tmp/err"
out_has_line "  note     environment: CUDA_INJECTION64_PATH=$lib is gputrace's: programs started from this shell are traced without the CLI (standalone mode)"
no_line_like '^  warning  environment'

# Another profiler preloaded into every process is a problem (one CUPTI subscriber only).
GPUTRACE_INJECT_LIB=$lib LD_PRELOAD=/opt/nvidia/nsys/libnsys-preload.so \
	"$gputrace" doctor >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 69 ] || fail "doctor with a profiler in LD_PRELOAD exited $rc, expected 69"
out_has_line "  PROBLEM  environment: LD_PRELOAD loads /opt/nvidia/nsys/libnsys-preload.so, another profiler: only one tool can subscribe to CUPTI in a process, so gputrace would detach and trace nothing"

cli_done cli-doctor
