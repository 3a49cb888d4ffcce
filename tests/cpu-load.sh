# CPU load for the load tests and CI's load pass (sourced, not run): every core kept busy by
# stress-ng (Debian's package) or, without it, by shell busy loops; each load process ends by
# itself after the given time and is stopped by its pid before that.
#   cpu_load_start SECONDS   start one busy process per core (or one stress-ng with a worker
#                            per core); their pids in cpu_load_pids
#   cpu_load_stop            stop them (by pid) and wait for them
cpu_load_pids=()

cpu_load_start() {
	local secs=$1 n
	n=$(nproc)
	if command -v stress-ng >/dev/null; then
		stress-ng --cpu "$n" --timeout "${secs}s" --quiet >/dev/null 2>&1 &
		cpu_load_pids+=($!)
	else
		for _ in $(seq "$n"); do
			timeout "$secs" sh -c 'while :; do :; done' >/dev/null 2>&1 &
			cpu_load_pids+=($!)
		done
	fi
}

cpu_load_stop() {
	local pid kids
	for pid in "${cpu_load_pids[@]}"; do
		# stress-ng's workers too (its children, by their pids), which it may leave to
		# finish after it exits
		kids=$(pgrep -P "$pid" 2>/dev/null)
		# shellcheck disable=SC2086
		kill "$pid" $kids 2>/dev/null
	done
	for pid in "${cpu_load_pids[@]}"; do
		wait "$pid" 2>/dev/null
	done
	cpu_load_pids=()
}
