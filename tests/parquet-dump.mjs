// Every table of a Parquet export read whole by DuckDB (@duckdb/node-api, from the folder
// GPUTRACE_DUCKDB_NODE names) and written as JSON, one file per table, its rows as arrays of
// values in column order (64-bit integers as strings), for parquet-values.py to compare with
// the SQLite export. Usage: node parquet-dump.mjs PARQUET_DIR OUT_DIR
import { createRequire } from 'module';
import fs from 'fs';

const [dir, out] = process.argv.slice(2);
const require = createRequire(process.env.GPUTRACE_DUCKDB_NODE + '/');
const { DuckDBInstance } = require('@duckdb/node-api');
const con = await (await DuckDBInstance.create(':memory:')).connect();
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.parquet'))) {
	const r = await con.runAndReadAll(`SELECT * FROM read_parquet('${dir}/${f}')`);
	fs.writeFileSync(`${out}/${f.slice(0, -8)}.json`, JSON.stringify(r.getRowsJson()));
}
