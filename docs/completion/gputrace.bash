# bash completion for gputrace. Installed as <datadir>/bash-completion/completions/gputrace.

_gputrace_list() {
	# Complete one item of a comma-separated list: keep what is before the last comma.
	local cur=$1 prefix=
	shift
	[[ $cur == *,* ]] && prefix=${cur%,*},
	COMPREPLY=($(compgen -P "$prefix" -W "$*" -- "${cur##*,}"))
	compopt -o nospace 2>/dev/null
}

_gputrace() {
	local cur prev cmd i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}

	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W "run stats advise report diff export sql view info merge doctor --help \
			--version" \
			-- "$cur"))
		return
	fi
	cmd=${COMP_WORDS[1]}

	case $cmd in
	run)
		# After the program's name, complete for the program: files.
		for ((i = 2; i < COMP_CWORD; i++)); do
			case ${COMP_WORDS[i]} in
			--) _gputrace_program $((i + 1)); return ;;
			-o | --output | -t | --trace | --api | --capture-range | --delay | --duration | \
				--buffer-size | --flush-interval | --write-queue | --graph | --backtrace | \
				--export | --live-interval)
				((i++)) ;;
			--gpu-metrics=* | --pytorch=*) ;;
			-*) ;;
			*) _gputrace_program $i; return ;;
			esac
		done
		case $prev in
		-o | --output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
		-t | --trace)
			_gputrace_list "$cur" kernel memcpy memset memory api nvtx sync graph overhead \
				all cuda default none
			return ;;
		--api) COMPREPLY=($(compgen -W "launch all none" -- "$cur")); return ;;
		--capture-range)
			COMPREPLY=($(compgen -W "none cudaProfilerApi nvtx:" -- "$cur"))
			[[ ${COMPREPLY[0]} == nvtx: ]] && compopt -o nospace 2>/dev/null
			return ;;
		--graph) COMPREPLY=($(compgen -W "graph node" -- "$cur")); return ;;
		--backtrace) COMPREPLY=($(compgen -W "none native native: python python: all all:" -- "$cur")); return ;;
		--export) COMPREPLY=($(compgen -W "chrome perfetto csv" -- "$cur")); return ;;
		--delay | --duration | --buffer-size | --flush-interval | --write-queue | \
			--live-interval) return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-o --output -f --force -q --quiet -t --trace --api
				--capture-range --delay --duration --buffer-size --flush-interval
				--write-queue --graph --backtrace --gpu-metrics --gpu-metrics= --pytorch
				--pytorch=shapes --export --stats --view --view= --live --live-interval -h
				--help --" -- "$cur"))
			[[ ${COMPREPLY[0]} == --view= || ${COMPREPLY[0]} == --gpu-metrics= ]] &&
				compopt -o nospace 2>/dev/null
		else
			COMPREPLY=($(compgen -c -- "$cur"))
		fi
		;;
	stats)
		case $prev in
		-r | --report)
			_gputrace_list "$cur" kernels api memcpy memset nvtx memory errors losses \
				nvtx-gpu gpu-metrics operators breakdown steps stragglers all
			return ;;
		-f | --format) COMPREPLY=($(compgen -W "table csv json" -- "$cur")); return ;;
		-o | --output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--by) COMPREPLY=($(compgen -W "rank process device host source" -- "$cur")); return ;;
		-n | --limit | --step | --min-lag | --from | --to | --pid | --rank | --device | --stream)
			return ;;
		--nvtx) COMPREPLY=($(compgen -W "ProfilerStep: step:" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-r --report -f --format -o --output -n --limit --by
				--step --min-lag --mangled --base-names --instances -q --quiet --from --to --nvtx
				--pid --rank --device --stream -h --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -X '!*.gtrace' -- "$cur") $(compgen -d -- "$cur"))
		fi
		;;
	advise)
		case $prev in
		-f | --format) COMPREPLY=($(compgen -W "table json" -- "$cur")); return ;;
		-o | --output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--fail-on) COMPREPLY=($(compgen -W "pageable-memcpy sync-memcpy sync-memset sync-api
			steady-malloc idle-host idle-event idle-other short-kernels copy-exposed slow-steps
			memory-full memory-growth straggler nccl-exposed" -- "$cur")); return ;;
		--top | --step | --from | --to | --pid | --rank | --device | --stream) return ;;
		--nvtx) COMPREPLY=($(compgen -W "ProfilerStep: step:" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-f --format -o --output --fail-on --top --step --mangled
				-q --quiet --from --to --nvtx --pid --rank --device --stream -h --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -X '!*.gtrace' -- "$cur") $(compgen -d -- "$cur"))
		fi
		;;
	report)
		case $prev in
		-o | --output) COMPREPLY=($(compgen -f -X '!*.html' -- "$cur") $(compgen -d -- "$cur")); return ;;
		--step | --from | --to | --pid | --rank | --device | --stream) return ;;
		--nvtx) COMPREPLY=($(compgen -W "ProfilerStep: step:" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-o --output --step --mangled -q --quiet --from --to --nvtx
				--pid --rank --device --stream -h --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -X '!*.gtrace' -- "$cur") $(compgen -d -- "$cur"))
		fi
		;;
	diff)
		case $prev in
		-f | --format) COMPREPLY=($(compgen -W "table csv json" -- "$cur")); return ;;
		-o | --output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--metric) COMPREPLY=($(compgen -W "gpu-time step-time" -- "$cur")); return ;;
		-n | --limit | --step | --fail-above | --from | --to | --pid | --rank | --device | --stream)
			return ;;
		--nvtx) COMPREPLY=($(compgen -W "ProfilerStep: step:" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-f --format -o --output -n --limit --mangled --step
				--fail-above --metric -q --quiet --from --to --nvtx --pid --rank --device
				--stream -h --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -X '!*.gtrace' -- "$cur") $(compgen -d -- "$cur"))
		fi
		;;
	export)
		case $prev in
		-f | --format) COMPREPLY=($(compgen -W "chrome perfetto csv sqlite" -- "$cur")); return ;;
		-o | --output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--nvtx) COMPREPLY=($(compgen -W "ProfilerStep: step:" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
		--max-size | --step | --from | --to | --pid | --rank | --device | --stream) return ;;
		--split) COMPREPLY=($(compgen -W "ranks" -- "$cur")); return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-f --format -o --output --max-size --split --step --no-steps
				--mangled -q --quiet --from --to --nvtx --pid --rank --device --stream -h --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -X '!*.gtrace' -- "$cur") $(compgen -d -- "$cur"))
		fi
		;;
	sql)
		case $prev in
		-f | --format) COMPREPLY=($(compgen -W "table csv json" -- "$cur")); return ;;
		--db) COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--from | --to | --pid | --rank | --device | --stream) return ;;
		--nvtx) COMPREPLY=($(compgen -W "ProfilerStep: step:" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-f --format --db --rebuild -q --quiet --from --to --nvtx
				--pid --rank --device --stream -h --help" -- "$cur"))
		elif ((COMP_CWORD == 2)); then
			COMPREPLY=($(compgen -f -X '!*.@(gtrace|sqlite)' -- "$cur") $(compgen -d -- "$cur"))
		fi
		;;
	view)
		case $prev in
		--nvtx) COMPREPLY=($(compgen -W "ProfilerStep: step:" -- "$cur")); compopt -o nospace 2>/dev/null; return ;;
		--port | --timeout | --first-steps | --from | --to | --pid | --rank | --device | --stream)
			return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--port --no-open --timeout -v --verbose --first-steps
				--from --to --nvtx --pid --rank --device --stream -h --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -X '!*.gtrace' -- "$cur") $(compgen -f -X '!*.pftrace' -- "$cur")
				$(compgen -d -- "$cur"))
		fi
		;;
	info)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--reindex -h --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -X '!*.gtrace' -- "$cur") $(compgen -d -- "$cur"))
		fi
		;;
	merge)
		case $prev in
		-o | --output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
		--align) COMPREPLY=($(compgen -W "wall nccl" -- "$cur")); return ;;
		-j | --threads) COMPREPLY=($(compgen -W "1 2 4 8" -- "$cur")); return ;;
		esac
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "-o --output --align -j --threads -q --quiet -h --help" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -X '!*.gtrace' -- "$cur") $(compgen -d -- "$cur"))
		fi
		;;
	doctor)
		COMPREPLY=($(compgen -W "-q --quiet -h --help" -- "$cur"))
		;;
	esac
}

# The traced program's own words: a command name first, then files.
_gputrace_program() {
	local start=$1
	if ((COMP_CWORD == start)); then
		COMPREPLY=($(compgen -c -- "${COMP_WORDS[COMP_CWORD]}"))
	else
		COMPREPLY=($(compgen -f -- "${COMP_WORDS[COMP_CWORD]}"))
	fi
}

complete -F _gputrace gputrace
