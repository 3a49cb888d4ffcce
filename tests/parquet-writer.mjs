// The file of tests/pq-write.c read by DuckDB (@duckdb/node-api, from the folder
// GPUTRACE_DUCKDB_NODE names): its rows as arrays in column order (64-bit integers as
// strings) and its column chunks' metadata, as JSON for parquet-writer.py.
// Usage: node parquet-writer.mjs FILE ROWS_JSON META_JSON
import { createRequire } from 'module';
import fs from 'fs';

const [file, rows, meta] = process.argv.slice(2);
const require = createRequire(process.env.GPUTRACE_DUCKDB_NODE + '/');
const { DuckDBInstance } = require('@duckdb/node-api');
const con = await (await DuckDBInstance.create(':memory:')).connect();
let r = await con.runAndReadAll(`SELECT * FROM read_parquet('${file}')`);
fs.writeFileSync(rows, JSON.stringify(r.getRowsJson()));
r = await con.runAndReadAll(`SELECT row_group_id, path_in_schema, encodings, compression, stats_min_value,
	stats_max_value, stats_null_count FROM parquet_metadata('${file}')
	ORDER BY row_group_id, column_id`);
fs.writeFileSync(meta, JSON.stringify(r.getRowObjectsJson()));
