#!/usr/bin/env node
// `node bench/pg-profile.mjs`: where PostgreSQL spends its time per new lead, one instance on a durable throwaway
// PostgreSQL (as bench/run.mjs starts it) with pg_stat_statements loaded. For each connection count
// (PROFILE_CONNECTIONS, default 1,16): PROFILE_SECONDS (default 6) of new leads, then the CPU per lead (server,
// PostgreSQL), the statements that took the most time (the ones inside the submit functions too: `track = all`), the
// functions' times, and per table the updates, HOT updates and dead rows. Prints figures only; needs `npm run build`.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { withCpu } from './cpu.mjs';
import { load } from './load.mjs';
import { benchEnv, killAll, SECRET, startServer, stop } from './processes.mjs';
import { startPostgres } from '../scripts/lib/throwaway-postgres.cjs';
import { newLead as newLeadBody } from './bodies.mjs';

const require = createRequire(import.meta.url);
const { Client } = require('pg');
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 6);
const CONNECTIONS = (process.env.PROFILE_CONNECTIONS ?? '1,16').split(',').map(Number);
const TOP = Number(process.env.PROFILE_TOP ?? 14);
const dir = mkdtempSync(join(tmpdir(), 'leads-pg-profile-'));
const children = [];

const newLead = () => newLeadBody('profile');

async function query(url, text) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

const RESET = `select pg_stat_statements_reset()`;
const STATEMENTS = `
  select calls, round(total_exec_time::numeric, 1) as total_ms, round((total_exec_time / greatest(calls, 1) * 1000)::numeric, 1) as mean_us,
         shared_blks_hit + shared_blks_read as blocks, rows, toplevel,
         regexp_replace(left(query, 110), '\\s+', ' ', 'g') as query
    from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
   order by total_exec_time desc limit ${TOP}`;
const FUNCTIONS = `select funcname as name, calls, total_time, self_time from pg_stat_user_functions`;
const TABLES = `
  select relname as name, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_dead_tup, n_live_tup, autovacuum_count, autoanalyze_count,
         pg_relation_size(relid) as heap_bytes, pg_indexes_size(relid) as index_bytes
    from pg_stat_user_tables`;
/** The rows of a statistics view after a run, their counters (`counters`) less the ones before it; unchanged rows left out. */
function since(before, after, counters) {
  const was = new Map(before.map((r) => [r.name, r]));
  return after
    .map((r) => ({ ...r, ...Object.fromEntries(counters.map((c) => [c, Number(r[c]) - Number(was.get(r.name)?.[c] ?? 0)])) }))
    .filter((r) => counters.some((c) => r[c] !== 0));
}
const TABLE_COUNTERS = ['n_tup_ins', 'n_tup_upd', 'n_tup_hot_upd', 'autovacuum_count', 'autoanalyze_count'];

function table(rows) {
  if (rows.length === 0) return '  (none)';
  const cols = Object.keys(rows[0]);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c]).length)));
  const line = (values) => `  ${values.map((v, i) => String(v).padEnd(width[i])).join('  ')}`;
  return [line(cols), ...rows.map((r) => line(cols.map((c) => r[c])))].join('\n');
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of every statement inside the decision, as plpgsql runs them on the filled database: the
 * decision called by hand in one session with auto_explain's nested statements sent back as notices, on a copy of the
 * newest lead under a new request_id and contacts (a new lead). The sixth call is shown: plpgsql plans a statement
 * afresh for its first five calls, then keeps a generic plan when it costs no more — what a long-lived pool runs.
 */
async function explainDecision(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  const notices = [];
  client.on('notice', (n) => notices.push(n.message));
  try {
    const [{ row, now }] = (
      await client.query(
        `select to_jsonb(l) - 'id' as row, (extract(epoch from clock_timestamp()) * 1000)::bigint as now from leads l order by id desc limit 1`,
      )
    ).rows;
    for (const s of [
      "load 'auto_explain'",
      'set auto_explain.log_min_duration = 0',
      'set auto_explain.log_nested_statements = on',
      'set auto_explain.log_analyze = on',
      'set auto_explain.log_buffers = on',
      'set auto_explain.log_timing = off',
      "set auto_explain.log_level = 'notice'",
    ])
      await client.query(s);
    for (let i = 1; i <= 6; i += 1) {
      notices.length = 0;
      const n = Number(now) + i;
      const key = `@explain_${process.pid}_${i}`;
      const phone = `+1555${String(process.pid % 1000).padStart(3, '0')}${String(i).padStart(4, '0')}`;
      const lead = { ...row, request_id: crypto.randomUUID(), telegram: key, telegram_key: key, phone, created_at: n, received_at: n };
      const plan = {
        request_id: lead.request_id,
        now: n,
        created_at: n,
        ip_hash: lead.ip_hash,
        count: 'accepted',
        limits: { visitor_since: n - 3_600_000, visitor_limit: 1_000_000_000, hourly_since: n - 3_600_000, hourly_limit: 1_000_000_000 },
        match: { telegram_key: key, phone, since: n - 86_400_000, until: n },
        incoming: {},
        fields: [],
        lead,
        repeat: {},
        fallback: null,
        late_story: null,
        erased: null,
        lock_key: 1,
      };
      await client.query('select leads_submit($1::jsonb)', [JSON.stringify(plan)]);
    }
    console.log('\n  the statements of the decision, EXPLAIN (ANALYZE, BUFFERS) of its sixth call (auto_explain):');
    for (const n of notices) console.log(`    ${n.replace(/\n/g, '\n    ')}`);
  } finally {
    await client.end();
  }
}

async function main() {
  console.log(`machine: ${cpus().length} × ${cpus()[0].model}, node ${process.version}; ${SECONDS} s per run`);
  const pg = await startPostgres({
    durable: true,
    settings: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all', track_functions: 'pl' },
  });
  console.log(`PostgreSQL ${pg.version}, durable; pg_stat_statements.track = all`);
  const url = await pg.createDatabase('profile');
  await query(url, 'create extension pg_stat_statements');
  const env = benchEnv(join(dir, 'unused.sqlite'), { DATABASE_URL: url });
  const server = await startServer(env, children);
  const headers = { 'X-Stickers-Leads-Secret': SECRET };
  // Warm: the functions' plans cached in the pool's backends, the tables' first pages written.
  await load({ url: `${server.url}/leads`, connections: 4, seconds: 1, next: newLead, headers });
  for (const c of CONNECTIONS) {
    await query(url, RESET);
    const [functionsBefore, tablesBefore] = [await query(url, FUNCTIONS), await query(url, TABLES)];
    const r = await withCpu(
      () => load({ url: `${server.url}/leads`, connections: c, seconds: SECONDS, next: newLead, headers }),
      [server.child.pid],
      pg.pid,
    );
    // Backends report their counts within a second of a transaction.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const statuses = Object.entries(r.statuses)
      .map(([s, n]) => `${s}×${n}`)
      .join(' ');
    console.log(`\n== ${c} connections: ${r.rps.toFixed(0)} req/s (indicative), p99 ${r.p99.toFixed(1)} ms (${statuses})`);
    console.log(
      `  cpu per lead: server ${r.cpu.server.toFixed(0)} µs, postgres ${r.cpu.pg.toFixed(0)} µs, client ${r.cpu.client.toFixed(0)} µs; others ${r.cpu.others.toFixed(2)} cores`,
    );
    console.log(`\n  statements by total time (pg_stat_statements, nested included):\n${table(await query(url, STATEMENTS))}`);
    const functions = since(functionsBefore, await query(url, FUNCTIONS), ['calls', 'total_time', 'self_time']).map((f) => ({
      name: f.name,
      calls: f.calls,
      total_ms: f.total_time.toFixed(1),
      self_ms: f.self_time.toFixed(1),
      mean_us: ((f.total_time / Math.max(1, f.calls)) * 1000).toFixed(1),
    }));
    console.log(`\n  functions (pg_stat_user_functions, this run):\n${table(functions)}`);
    const tables = since(tablesBefore, await query(url, TABLES), TABLE_COUNTERS);
    console.log(`\n  tables (pg_stat_user_tables; counts of this run, n_dead_tup, n_live_tup and sizes at its end):\n${table(tables)}`);
  }
  await explainDecision(url);
  await stop(server.child);
  await pg.stop();
}

process.once('SIGINT', () => process.exit(130));

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => {
    killAll(children);
    rmSync(dir, { recursive: true, force: true });
  });
