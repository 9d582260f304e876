// parquet_duckdb.mjs - DuckDB reads a file of tools/parquet.c: checks it against what
// tests/parquet_gen printed (JSON), with real queries.
//
// usage: node parquet_duckdb.mjs NPM_DIR FILE.parquet EXPECTED.json
//   NPM_DIR holds node_modules/@duckdb/node-api (tests/parquet_duckdb.sh installs it).
// EXPECTED.json's "kind" says which table parquet_gen wrote:
// "edges": int64 extremes read back through bit_xor/min/max in the delta, PLAIN and
//   dictionary columns, int32 sums, string byte counts, empty and replaced strings; the
//   optional columns' values and nulls (count, xor, bytes, sum; null_count statistics);
// "empty": a 0-row file reads as 0 rows with its schema;
// "atf_slices", "atf_events": a table of `atf export --format parquet` against the
//   session's `atf stats --json` (in "stats"; see checkAtfSlices), the slices also against
//   the session's events table ("events": its file, beside EXPECTED.json), the wall-clock
//   columns against the manifest's wall_clock_ns anchor ("wall": host_ns and value);
// "atf_nowall": the slices (and "events") of a copy of that session without its anchor:
//   every wall-clock value null;
// "slices": the column types DuckDB sees; count(*); count and sum(self_ns) per name; the
// number of row groups and the start_ns min/max statistics of each; a start_ns window
// query; and that the window query skips row groups by their statistics: the start_ns
// chunks of every row group outside the window are overwritten with garbage in a copy
// of the file, a full scan of that copy must fail, and the window query must still give
// the right count. Prints one line per check, then "parquet_duckdb.KIND: N passed, M
// failed"; exits 1 when any check fails.
import { createRequire } from 'node:module';
import { copyFileSync, openSync, writeSync, closeSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const [npmDir, file, expectedPath] = process.argv.slice(2);
if (!npmDir || !file || !expectedPath) {
  console.error('usage: node parquet_duckdb.mjs NPM_DIR FILE.parquet EXPECTED.json');
  process.exit(2);
}
const require = createRequire(join(resolve(npmDir), 'package.json')); // wants an absolute path
const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'));
const expected = JSON.parse(readFileSync(expectedPath, 'utf8'));

let failures = 0;
let passes = 0;
function check(what, ok, detail) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : ': ' + detail}`);
  if (ok) passes++;
  else failures++;
}

const instance = await DuckDBInstance.create(':memory:');
const con = await instance.connect();
async function rows(sql) {
  const reader = await con.runAndReadAll(sql);
  return reader.getRowObjectsJson();
}
const quoted = (path) => `'${path.replace(/'/g, "''")}'`;
const src = `read_parquet(${quoted(file)})`;
const garbled = file.replace(/\.parquet$/, '') + '.garbled.parquet';
const garbledSrc = `read_parquet(${quoted(garbled)})`;

async function checkSlices() {
  const wantTypes = {
    pid: 'BIGINT', tid: 'BIGINT', thread_slot: 'INTEGER', thread_name: 'VARCHAR',
    function_id: 'BIGINT', name: 'VARCHAR', depth: 'INTEGER', start_ns: 'TIMESTAMP_NS',
    end_ns: 'TIMESTAMP_NS', dur_ns: 'BIGINT', self_ns: 'BIGINT', ended_by: 'VARCHAR',
    has_detail: 'INTEGER',
  };
  const described = await rows(`DESCRIBE SELECT * FROM ${src}`);
  const gotTypes = Object.fromEntries(described.map((r) => [r.column_name, r.column_type]));
  check('column names and types', JSON.stringify(gotTypes) === JSON.stringify(wantTypes),
        JSON.stringify(gotTypes));

  const [total] = await rows(`SELECT count(*)::VARCHAR AS n FROM ${src}`);
  check('count(*)', total.n === String(expected.rows), `expected ${expected.rows}, found ${total.n}`);

  const byName = await rows(`SELECT name, count(*)::VARCHAR AS n, sum(self_ns)::VARCHAR AS s
                             FROM ${src} GROUP BY name`);
  const found = new Map(byName.map((r) => [r.name, r]));
  let nameProblems = [];
  for (const e of expected.names) {
    const f = found.get(e.name);
    if (!f || f.n !== String(e.count) || f.s !== e.self_ns) {
      nameProblems.push(`${e.name}: expected ${e.count}/${e.self_ns}, found ${f ? f.n + '/' + f.s : 'none'}`);
    }
  }
  if (found.size !== expected.names.filter((e) => e.count > 0).length) {
    nameProblems.push(`expected ${expected.names.length} names, found ${found.size}`);
  }
  check('count and sum(self_ns) per name', nameProblems.length === 0, nameProblems.join('; '));

  const meta = await rows(`SELECT row_group_id::VARCHAR AS rg,
      epoch_ns(stats_min_value::TIMESTAMP_NS)::VARCHAR AS lo,
      epoch_ns(stats_max_value::TIMESTAMP_NS)::VARCHAR AS hi,
      coalesce(dictionary_page_offset, data_page_offset)::VARCHAR AS off,
      total_compressed_size::VARCHAR AS size
    FROM parquet_metadata(${quoted(file)}) WHERE path_in_schema = 'start_ns' ORDER BY row_group_id`);
  check('row group count', meta.length === expected.row_groups.length,
        `expected ${expected.row_groups.length}, found ${meta.length}`);
  const statProblems = [];
  meta.forEach((m, i) => {
    const e = expected.row_groups[i];
    if (!e || m.lo !== e.min || m.hi !== e.max) {
      statProblems.push(`row group ${i}: expected ${e ? e.min + '..' + e.max : 'none'}, found ${m.lo}..${m.hi}`);
    }
  });
  check('start_ns min/max per row group', statProblems.length === 0, statProblems.join('; '));

  const win = expected.window;
  const windowSql = (path) => `SELECT count(*)::VARCHAR AS n FROM ${path}
    WHERE start_ns >= make_timestamp_ns(${win.lo}) AND start_ns < make_timestamp_ns(${win.hi})`;
  const [inWindow] = await rows(windowSql(src));
  check('window count', inWindow.n === String(win.rows), `expected ${win.rows}, found ${inWindow.n}`);

  // Garble the start_ns chunks of the row groups the window cannot touch.
  const outside = meta.filter((m) => BigInt(m.hi) < BigInt(win.lo) || BigInt(m.lo) >= BigInt(win.hi));
  check('some row groups lie outside the window', outside.length > 0 && outside.length < meta.length,
        `${outside.length} of ${meta.length}`);
  copyFileSync(file, garbled);
  const fd = openSync(garbled, 'r+');
  for (const m of outside) writeSync(fd, Buffer.alloc(Number(m.size), 0xff), 0, Number(m.size), Number(m.off));
  closeSync(fd);
  // The control: the garbage must be noticed when read (DuckDB then fails to parse a page
  // header), or the next check proves nothing.
  let fullScan = 'no error';
  try {
    await rows(`SELECT sum(epoch_ns(start_ns)) FROM ${garbledSrc}`);
  } catch (e) {
    fullScan = e.message;
  }
  check('a full scan of the garbled copy fails while reading',
        fullScan !== 'no error' && !/Binder Error|No files found/.test(fullScan),
        fullScan);
  let skipped;
  try {
    [skipped] = await rows(windowSql(garbledSrc));
  } catch (e) {
    skipped = { n: 'error: ' + e.message };
  }
  check('window query skips row groups by statistics', skipped.n === String(win.rows),
        `expected ${win.rows}, found ${skipped.n}`);
}

// Extremes and awkward strings: aggregates that see every value.
async function checkEdges() {
  const [got] = await rows(`SELECT count(*)::VARCHAR AS n, bit_xor(big)::VARCHAR AS xb,
      bit_xor(big_plain)::VARCHAR AS xp, bit_xor(big_dict)::VARCHAR AS xd,
      min(big)::VARCHAR AS lo, max(big)::VARCHAR AS hi, sum(small)::VARCHAR AS s32,
      sum(strlen(text) + strlen(long_text))::VARCHAR AS tb, sum(octet_length(raw))::VARCHAR AS rb,
      (count(*) FILTER (WHERE text = ''))::VARCHAR AS empty
    FROM ${src}`);
  const want = {
    n: String(expected.rows), xb: expected.xor_big, xp: expected.xor_big, xd: expected.xor_big_dict,
    lo: expected.min_big, hi: expected.max_big, s32: expected.sum_small, tb: expected.text_bytes,
    rb: expected.raw_bytes, empty: String(expected.empty_texts),
  };
  for (const k of Object.keys(want)) check(`edges: ${k}`, got[k] === want[k], `expected ${want[k]}, found ${got[k]}`);
  const [bad] = await rows(`SELECT (count(*) FILTER (WHERE text LIKE '%\uFFFD%'))::VARCHAR AS n FROM ${src}`);
  check('edges: bad UTF-8 arrives replaced', bad.n === String(expected.bad_texts),
        `expected ${expected.bad_texts} rows with U+FFFD, found ${bad.n}`);
  // optional columns: the values that are there, and the nulls (rows and statistics)
  const [opt] = await rows(`SELECT count(maybe_wall)::VARCHAR AS wn,
      bit_xor(epoch_ns(maybe_wall))::VARCHAR AS wx, count(maybe_text)::VARCHAR AS tn,
      sum(strlen(maybe_text))::VARCHAR AS tb, count(maybe_small)::VARCHAR AS sn,
      sum(maybe_small)::VARCHAR AS ss FROM ${src}`);
  const wantOpt = {
    wn: String(expected.wall_values), wx: expected.xor_wall, tn: String(expected.text_values),
    tb: expected.maybe_text_bytes, sn: String(expected.small_values), ss: expected.sum_maybe_small,
  };
  for (const k of Object.keys(wantOpt)) check(`edges: optional ${k}`, opt[k] === wantOpt[k], `expected ${wantOpt[k]}, found ${opt[k]}`);
  const nulls = await rows(`SELECT path_in_schema AS c, sum(stats_null_count)::VARCHAR AS n
      FROM parquet_metadata(${quoted(file)}) WHERE path_in_schema LIKE 'maybe_%' GROUP BY 1 ORDER BY 1`);
  const wantNulls = { maybe_small: expected.rows - expected.small_values,
                      maybe_text: expected.rows - expected.text_values,
                      maybe_wall: expected.rows - expected.wall_values };
  check('edges: null_count statistics of the optional columns',
        nulls.length === 3 && nulls.every((r) => r.n === String(wantNulls[r.c])), JSON.stringify(nulls));
}

async function checkEmpty() {
  const [got] = await rows(`SELECT count(*)::VARCHAR AS n FROM ${src}`);
  check('empty: count(*)', got.n === '0', `found ${got.n}`);
  const cols = await rows(`DESCRIBE SELECT * FROM ${src}`);
  check('empty: schema read', cols.length > 0, 'no columns');
}

// A session exported by `atf export --format parquet`, against its `atf stats --json`
// (EXPECTED.json's "stats"): per function, the slices table's count(*) and sum(self_ns)
// equal calls and self_ns; the events table has every event, and its calls per function
// equal calls. The slices' sum(has_detail) equals the calls with a detail_seq in the
// events table (EXPECTED.json's "events"), and is not 0. Also the column types each table
// promises (docs/PARQUET.md).
function statsByFid() {
  return new Map(expected.stats.functions.map((f) => [f.fid, f]));
}

function checkTypes(what, got, want) {
  const found = Object.fromEntries(got.map((r) => [r.column_name, r.column_type]));
  check(`${what}: column names and types`, JSON.stringify(found) === JSON.stringify(want),
        JSON.stringify(found));
}

function checkPerFunction(what, got, key) {
  const want = statsByFid();
  const problems = [];
  for (const r of got) {
    const f = want.get(r.fid);
    if (!f || r.n !== String(f.calls) || (key && r.s !== String(f[key]))) {
      problems.push(`${r.fid}: found ${r.n}/${r.s}, expected ${f ? f.calls + '/' + f[key] : 'none'}`);
    }
  }
  if (got.length !== want.size) problems.push(`expected ${want.size} functions, found ${got.length}`);
  check(what, problems.length === 0 && got.length > 0, problems.join('; ') || 'no rows');
}

async function checkAtfSlices() {
  checkTypes('atf slices', await rows(`DESCRIBE SELECT * FROM ${src}`), {
    pid: 'BIGINT', tid: 'BIGINT', thread_slot: 'BIGINT', thread_name: 'VARCHAR',
    function_id: 'BIGINT', fid: 'VARCHAR', name: 'VARCHAR', mangled: 'VARCHAR',
    module: 'VARCHAR', depth: 'INTEGER',
    start_ns: 'BIGINT', end_ns: 'BIGINT', dur_ns: 'BIGINT', self_ns: 'BIGINT',
    ended_by: 'VARCHAR', has_detail: 'INTEGER', paused_ns: 'BIGINT',
    start_wall: 'TIMESTAMP WITH TIME ZONE', end_wall: 'TIMESTAMP WITH TIME ZONE',
  });
  const got = await rows(`SELECT fid, count(*)::VARCHAR AS n, sum(self_ns)::VARCHAR AS s
                          FROM ${src} GROUP BY fid`);
  checkPerFunction('atf slices: count(*) and sum(self_ns) per function = atf stats --json', got,
                   'self_ns');
  const [bad] = await rows(`SELECT count(*)::VARCHAR AS n FROM ${src}
      WHERE dur_ns <> end_ns - start_ns OR self_ns > dur_ns - paused_ns
         OR paused_ns < 0 OR printf('0x%016x', function_id) <> fid`);
  check('atf slices: dur_ns = end_ns - start_ns, self_ns <= dur_ns - paused_ns, ' +
        'fid = function_id',
        bad.n === '0', `${bad.n} rows disagree`);
  const events = `read_parquet(${quoted(join(dirname(resolve(expectedPath)), expected.events))})`;
  const [detail] = await rows(`SELECT
      (SELECT sum(has_detail) FROM ${src})::VARCHAR AS slices,
      (SELECT count(*) FROM ${src} WHERE has_detail NOT IN (0, 1))::VARCHAR AS other,
      (SELECT count(*) FROM ${events} WHERE kind = 'call' AND detail_seq <> -1)::VARCHAR AS calls`);
  check('atf slices: sum(has_detail) = the calls with detail of the events table, not 0',
        detail.slices === detail.calls && detail.other === '0' && detail.calls !== '0',
        `sum(has_detail) ${detail.slices}, calls with detail ${detail.calls}, ` +
        `${detail.other} values other than 0 and 1`);
  await checkWall('atf slices', [['start_ns', 'start_wall'], ['end_ns', 'end_wall']]);
}

// The wall-clock columns: every row has them, a date of this century, and each is its
// trace time shifted by the anchor (value - host_ns), to the microsecond DuckDB keeps of a
// UTC timestamp.
async function checkWall(what, pairs) {
  const { host_ns: host, value } = expected.wall;
  const off = (ns, wall) => `(${wall} IS NULL OR year(${wall}) < 2000 OR
      epoch_us(${wall}) <> (${ns}::HUGEINT + ${value} - ${host}) // 1000)`;
  const [bad] = await rows(`SELECT count(*)::VARCHAR AS n FROM ${src}
      WHERE ${pairs.map(([ns, wall]) => off(ns, wall)).join(' OR ')}`);
  check(`${what}: ${pairs.map((p) => p[1]).join(', ')} = the trace times on the anchor's wall clock`,
        bad.n === '0', `${bad.n} rows disagree or are null`);
}

// Without a wall_clock_ns anchor: the wall-clock columns are there, and null.
async function checkAtfNoWall() {
  const events = `read_parquet(${quoted(join(dirname(resolve(expectedPath)), expected.events))})`;
  const [got] = await rows(`SELECT
      (SELECT count(*) FROM ${src})::VARCHAR AS slices,
      (SELECT count(start_wall) + count(end_wall) FROM ${src})::VARCHAR AS walls,
      (SELECT count(*) FROM ${events})::VARCHAR AS events,
      (SELECT count(ts_wall) FROM ${events})::VARCHAR AS ts_walls`);
  check('atf without a wall clock: rows, every wall-clock value null',
        got.slices !== '0' && got.events !== '0' && got.walls === '0' && got.ts_walls === '0',
        JSON.stringify(got));
}

async function checkAtfEvents() {
  checkTypes('atf events', await rows(`DESCRIBE SELECT * FROM ${src}`), {
    pid: 'BIGINT', thread_slot: 'BIGINT', seq: 'BIGINT', ts_ns: 'BIGINT',
    function_id: 'BIGINT', fid: 'VARCHAR', name: 'VARCHAR', mangled: 'VARCHAR', kind: 'VARCHAR',
    depth: 'BIGINT', detail_seq: 'BIGINT', ts_wall: 'TIMESTAMP WITH TIME ZONE',
  });
  const events = expected.stats.threads.reduce((n, t) => n + BigInt(t.events), 0n);
  const [total] = await rows(`SELECT count(*)::VARCHAR AS n FROM ${src}`);
  check('atf events: count(*) = the events of atf stats --json', total.n === String(events),
        `expected ${events}, found ${total.n}`);
  const got = await rows(`SELECT fid, count(*)::VARCHAR AS n, NULL AS s FROM ${src}
                          WHERE kind = 'call' GROUP BY fid`);
  checkPerFunction('atf events: calls per function = atf stats --json', got, null);
  await checkWall('atf events', [['ts_ns', 'ts_wall']]);
}

const checks = { slices: checkSlices, edges: checkEdges, empty: checkEmpty,
                 atf_slices: checkAtfSlices, atf_events: checkAtfEvents,
                 atf_nowall: checkAtfNoWall };
if (!checks[expected.kind]) {
  console.error(`unknown kind ${expected.kind}`);
  process.exit(2);
}
await checks[expected.kind]();
console.log(`parquet_duckdb.${expected.kind}: ${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
