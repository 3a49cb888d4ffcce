#!/usr/bin/env bash
# The Python examples of docs/sql.md ("Many ranks: DuckDB and pandas") run as written on two
# ranks' databases (gputrace export -f sqlite), and what they compute equals SQLite's own
# answer. Each needs its module (pandas: Debian's python3-pandas; duckdb and its sqlite
# extension); the test skips (77) when neither can be imported.
# Usage: sql-docs-python.sh gputrace mktrace docs/sql.md
set -u
gputrace=$(realpath "$1")
mktrace=$(realpath "$2")
doc=$(realpath "$3")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=cli-common.sh
. "$(dirname "$0")/cli-common.sh"
cd "$tmp" || exit 1

# the first python3 that can import $1 (the one on PATH may be a private one)
python_with() {
	local py
	for py in python3 /usr/bin/python3; do
		if command -v "$py" >/dev/null && "$py" -c "import $1" 2>/dev/null; then
			echo "$py"
			return 0
		fi
	done
	return 1
}

# the ```python block of docs/sql.md that follows the line starting with $1
doc_block() {
	awk -v start="$1" 'index($0, start) == 1 { found = 1 }
		found && /^```python/ { inside = 1; next }
		inside && /^```/ { exit }
		inside { print }' "$doc"
}

pandas_py=$(python_with pandas) || pandas_py=
duckdb_py=$(python_with duckdb) || duckdb_py=
if [ -z "$pandas_py" ] && [ -z "$duckdb_py" ]; then
	echo "SKIP: no python3 with pandas or duckdb"
	exit 77
fi

for r in 0 1; do
	"$mktrace" -o "rank-$r.gtrace" --kernels $((300 + 100 * r)) --names 7 --processes 1 \
		--pid $((4000 + r)) --rank "$r" --world 2 --api >/dev/null ||
		{ echo "FAIL: mktrace" >&2; exit 1; }
	expect_rc 0 "$gputrace" export "rank-$r.gtrace" -f sqlite -q
	[ -f "rank-$r.sqlite" ] || fail "no rank-$r.sqlite"
done
# SQLite's own answer: kernels and GPU time per rank, "rank,kernels,ns" lines
want=$(for r in 0 1; do
	"$gputrace" sql "rank-$r.gtrace" -f csv "SELECT g.rank, count(*), sum(k.end - k.start)
		FROM CUPTI_ACTIVITY_KIND_KERNEL AS k
		JOIN GPUTRACE_RANKS AS g ON g.globalPid = k.globalPid GROUP BY g.rank" |
		tr -d '\r' | tail -n +2
done)
[ "$(echo "$want" | wc -l)" = 2 ] || fail "SQLite's answer: [$want]"

if [ -n "$pandas_py" ]; then
	doc_block "**pandas**" >example_pandas.py
	[ -s example_pandas.py ] || fail "no pandas example in docs/sql.md"
	# after the example: the same figures from its data frame
	cat >>example_pandas.py <<'PY'
for rank, g in df.groupby("rank"):
    print(f"check {rank},{len(g)},{g['ns'].sum()}")
PY
	expect_rc 0 "$pandas_py" example_pandas.py
	got=$(sed -n 's/^check //p' "$tmp/out")
	[ "$got" = "$want" ] || fail "pandas example: [$got], SQLite: [$want]"
	grep -q "^kernel" "$tmp/out" || fail "pandas example printed no pivot table: $(cat "$tmp/out")"
	cat "$tmp/out"
else
	echo "pandas: not installed, its example not run"
fi

if [ -n "$duckdb_py" ]; then
	doc_block "**DuckDB**" >example_duckdb.py
	[ -s example_duckdb.py ] || fail "no DuckDB example in docs/sql.md"
	cat >>example_duckdb.py <<'PY'
for rank, n, ns in con.sql("""SELECT rank, count(*), sum("end" - start)::BIGINT
                              FROM kernels GROUP BY rank ORDER BY rank""").fetchall():
    print(f"check {rank},{n},{ns}")
PY
	expect_rc 0 "$duckdb_py" example_duckdb.py
	got=$(sed -n 's/^check //p' "$tmp/out")
	[ "$got" = "$want" ] || fail "DuckDB example: [$got], SQLite: [$want]"
else
	echo "duckdb: not installed, its example not run"
fi
cli_done sql-docs-python
