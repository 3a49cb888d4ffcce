// A folder of hive partitions (gputrace export T... -f parquet -o DIR) read by DuckDB
// (@duckdb/node-api, from the folder GPUTRACE_DUCKDB_NODE names) as one table, as docs/sql.md
// and docs/scale.md show it: per partition the rows of each query, printed as CSV lines for
// parquet-hive-duckdb.sh to compare. Usage: node parquet-hive.mjs DIR
import { createRequire } from 'module';

const [dir] = process.argv.slice(2);
const require = createRequire(process.env.GPUTRACE_DUCKDB_NODE + '/');
const { DuckDBInstance } = require('@duckdb/node-api');
const con = await (await DuckDBInstance.create(':memory:')).connect();

async function print(label, sql) {
	for (const r of (await con.runAndReadAll(sql)).getRowObjectsJson())
		console.log([label, ...Object.values(r)].join(','));
}
const k = `read_parquet('${dir}/*/CUPTI_ACTIVITY_KIND_KERNEL.parquet', hive_partitioning = true)`;
await print('kernels', `SELECT rank, count(*), sum("end" - start) FROM ${k} GROUP BY rank ORDER BY rank`);
await print('rank-type', `SELECT DISTINCT typeof(rank) FROM ${k}`);
const all = `read_parquet('${dir}/**/CUPTI_ACTIVITY_KIND_KERNEL.parquet', hive_partitioning = true)`;
await print('total', `SELECT count(*) FROM ${all}`);
