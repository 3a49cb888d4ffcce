// The Parquet export read by DuckDB (@duckdb/node-api, from the folder GPUTRACE_DUCKDB_NODE
// names): every table's row count equal to the SQLite export's, and queries of docs/sql.md
// giving the same rows on both. Run by parquet-duckdb.sh with the SQLite side's answers as
// JSON files. Usage: node parquet-duckdb.mjs PARQUET_DIR ANSWERS_DIR QUERIES_FILE
import { createRequire } from 'module';
import fs from 'fs';

const [dir, answers, queriesFile] = process.argv.slice(2);
const require = createRequire(process.env.GPUTRACE_DUCKDB_NODE + '/');
const { DuckDBInstance } = require('@duckdb/node-api');
const con = await (await DuckDBInstance.create(':memory:')).connect();
let failed = 0;

async function rows(sql) {
	return (await con.runAndReadAll(sql)).getRowObjectsJson();
}

// one view per table, so that the queries of docs/sql.md run as they are written
const tables = fs.readdirSync(dir).filter((f) => f.endsWith('.parquet')).map((f) => f.slice(0, -8));
for (const t of tables)
	await con.run(`CREATE VIEW "${t}" AS SELECT * FROM read_parquet('${dir}/${t}.parquet')`);

// row counts: answers/counts.json is [{table, n}] from the SQLite export
const want = JSON.parse(fs.readFileSync(`${answers}/counts.json`, 'utf8'));
if (want.length !== tables.length) {
	console.log(`tables: SQLite ${want.length}, Parquet ${tables.length}`);
	failed++;
}
for (const w of want) {
	const got = (await rows(`SELECT count(*) AS n FROM "${w.table}"`))[0].n;
	if (String(got) !== String(w.n)) {
		console.log(`${w.table}: SQLite ${w.n} rows, Parquet ${got}`);
		failed++;
	}
}
console.log(`${want.length} tables compared`);

// the kernel count of `gputrace stats`
const kernels = Number(fs.readFileSync(`${answers}/stats-kernels`, 'utf8'));
const kn = Number((await rows('SELECT count(*) AS n FROM CUPTI_ACTIVITY_KIND_KERNEL'))[0].n);
if (kn !== kernels) {
	console.log(`kernels: stats ${kernels}, Parquet ${kn}`);
	failed++;
}

// each query: the same rows, numbers equal to 1e-9 relative (avg() prints differently)
function same(a, b) {
	if (a === null || b === null)
		return a === b;
	const x = Number(a), y = Number(b);
	if (!Number.isNaN(x) && !Number.isNaN(y))
		return x === y || Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
	return String(a) === String(b);
}
const queries = fs.readFileSync(queriesFile, 'utf8').split('\n;;\n').filter((q) => q.trim());
for (let i = 0; i < queries.length; i++) {
	const w = JSON.parse(fs.readFileSync(`${answers}/q${i}.json`, 'utf8'));
	const g = await rows(queries[i]);
	let ok = w.length === g.length && w.length > 0;
	for (let r = 0; ok && r < w.length; r++) {
		const kw = Object.keys(w[r]), kg = Object.keys(g[r]);
		ok = kw.length === kg.length && kw.every((k, c) => same(w[r][k], g[r][kg[c]]));
	}
	if (!ok) {
		console.log(`query ${i}: SQLite ${JSON.stringify(w).slice(0, 400)}`);
		console.log(`query ${i}: DuckDB ${JSON.stringify(g).slice(0, 400)}`);
		failed++;
	}
}
console.log(`${queries.length} queries compared, ${failed} differences`);
process.exit(failed ? 1 : 0);
