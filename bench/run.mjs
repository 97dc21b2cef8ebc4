#!/usr/bin/env node
// `npm run bench`: POST /leads throughput and latency (ours vs a bare node:http + better-sqlite3 server doing the
// same work; ours on SQLite, and on PostgreSQL with one and with two instances sharing the database), card latency
// through the sandbox, and memory and p99 with 100,000 stored leads. Prints figures only; nothing here is a
// pass/fail test. Needs `npm run build` first (npm run bench does it). BENCH_POSTGRES=0 skips PostgreSQL (also
// skipped, with a line saying so, when its server binaries are not installed).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { freePort, run, waitForHttp } from '../e2e/stack.mjs';
import { invalid, newLead } from './bodies.mjs';
import { load, percentile } from './load.mjs';
import { benchEnv, killAll, SECRET, stop } from './processes.mjs';
import { withCpu } from './cpu.mjs';
import { postgresBinDir, startPostgres } from '../scripts/lib/throwaway-postgres.cjs';

const require = createRequire(import.meta.url);
const { startSandbox } = require('../sandbox/dist/index.js');
const { Client } = require('pg');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '1,16,64').split(',').map(Number);
const POSTGRES = process.env.BENCH_POSTGRES !== '0';
const dir = mkdtempSync(join(tmpdir(), 'leads-bench-'));
const children = [];

/** Starts a server and resolves once its /health answers over HTTP. */
async function start(name, args, env, url) {
  const child = run(name, args, env);
  children.push(child);
  await waitForHttp(url.replace('/leads', '/health'), child, name);
  return child;
}
const fmtCpu = (r) =>
  `  cpu/req: server ${r.cpu.server.toFixed(0)} µs${r.cpu.pg ? `, postgres ${r.cpu.pg.toFixed(0)} µs` : ''}, client ${r.cpu.client.toFixed(0)} µs` +
  `; others ${r.cpu.others.toFixed(2)} cores`;
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

/**
 * How long the submit decisions run inside PostgreSQL (`leads_submit_batch`, one call per group commit, holding the
 * submit lock from its first statement to the commit), summed over a database, and how many decisions
 * (`leads_decide`): `track_functions = 'pl'` counts them.
 */
async function decisionTime(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      "select coalesce(sum(calls) filter (where funcname = 'leads_decide'), 0)::float8 as calls, " +
        "coalesce(sum(total_time) filter (where funcname in ('leads_submit', 'leads_submit_batch')), 0)::float8 as ms from pg_stat_user_functions",
    );
    return rows[0];
  } finally {
    await client.end();
  }
}
async function trackFunctions(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`alter database ${new URL(url).pathname.slice(1)} set track_functions = 'pl'`);
  } finally {
    await client.end();
  }
}
/** Runs `work`, then the mean time of one decision inside PostgreSQL meanwhile (ms, lock wait included). */
async function withDecisionTime(url, work) {
  const before = await decisionTime(url);
  const result = await work();
  // Backends report their counts within a second of a transaction.
  await new Promise((r) => setTimeout(r, 1200));
  const after = await decisionTime(url);
  const calls = after.calls - before.calls;
  result.decisionMs = calls > 0 ? (after.ms - before.ms) / calls : null;
  return result;
}

/** PostgreSQL for the bench, or why there is none: `{ pg }` or `{ skipped }`. */
async function startBenchPostgres() {
  if (!POSTGRES) return { skipped: 'BENCH_POSTGRES=0' };
  try {
    postgresBinDir();
  } catch (err) {
    return { skipped: `${err.message} (BENCH_POSTGRES=0 skips it without this line)` };
  }
  // Durable: fsync, synchronous_commit and full_page_writes on, as in production (the tests' server runs without).
  return { pg: await startPostgres({ durable: true }) };
}

const serverEnv = (db, extra = {}) => benchEnv(db, { PORT: '0', ...extra });

async function startOurs(db, extra = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/leads`;
  return { child: await start('server', ['server/dist/main.js'], serverEnv(db, { PORT: String(port), ...extra }), url), url };
}
/** The bare baseline; `synchronous` FULL (as durable as ours) or NORMAL (no fsync per commit). */
async function startBare(db, synchronous = 'FULL') {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/leads`;
  const env = serverEnv(db, { PORT: String(port), BARE_SYNCHRONOUS: synchronous });
  return { child: await start(`bare ${synchronous}`, ['bench/bare-server.mjs'], env, url), url };
}

const fmt = (r) =>
  `${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  (${Object.entries(
    r.statuses,
  )
    .map(([s, n]) => `${s}×${n}`)
    .join(' ')}${r.errors ? `, ${r.errors} errors` : ''})`;

/** Section 1 as one Markdown table (what docs/performance.md shows): every kind and server, ratios against bare. */
function printTable(results) {
  const ms = (v) => `${v.toFixed(1)} ms`;
  const cpu = (r) => (r.cpu ? `${r.cpu.server.toFixed(0)}${r.cpu.pg ? ` + ${r.cpu.pg.toFixed(0)}` : ''}` : '');
  console.log(
    '\n| connections | kind | server | req/s | p50 | p99 | vs bare FULL: throughput | vs bare FULL: p99 | vs bare NORMAL: throughput | CPU µs/req (server + PostgreSQL) | others (cores) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const row of results) {
    // [kind, server, result, the bare FULL result of the same kind to compare with, the bare NORMAL one]
    const rows = [
      ['new lead', 'bare FULL (SQLite)', row.bare],
      ['new lead', 'bare NORMAL (SQLite)', row.bareNormal],
      ['new lead', 'ours, SQLite (FULL)', row.oursNew, row.bare, row.bareNormal],
      ['new lead', 'ours, PostgreSQL ×1', row.pgNew, row.bare],
      ['new lead', 'ours, PostgreSQL ×2', row.pg2New, row.bare],
      ['duplicate', 'bare FULL (SQLite)', row.bareDup],
      ['duplicate', 'ours, SQLite', row.oursDup, row.bareDup],
      ['duplicate', 'ours, PostgreSQL ×1', row.pgDup],
      ['duplicate', 'ours, PostgreSQL ×2', row.pg2Dup],
      ['422', 'bare FULL (SQLite)', row.bare422],
      ['422', 'ours, SQLite', row.ours422, row.bare422],
    ];
    for (const [kind, server, r, full, normal] of rows) {
      if (!r) continue;
      const rel = full ? [`**${(r.rps / full.rps).toFixed(2)}×**`, `${(r.p99 / full.p99).toFixed(2)}×`] : ['', ''];
      const vsNormal = normal ? `**${(r.rps / normal.rps).toFixed(2)}×**` : '';
      console.log(
        `| ${row.c} | ${kind} | ${server} | ${r.rps.toFixed(0)} | ${ms(r.p50)} | ${ms(r.p99)} | ${rel.join(' | ')} | ${vsNormal} | ${cpu(r)} | ${r.cpu ? r.cpu.others.toFixed(2) : ''} |`,
      );
    }
  }
}

async function main() {
  console.log(
    `machine: ${cpus().length} × ${cpus()[0].model}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}; ${SECONDS} s per run`,
  );
  const headers = { 'X-Stickers-Leads-Secret': SECRET };
  const results = [];

  // 1. Throughput and latency: ours (publishing paused: no bot token, the API alone) and the bare server; ours on a
  // durable PostgreSQL too, one instance, and two instances sharing one database with requests split round robin.
  const ours = await startOurs(join(dir, 'ours.sqlite'));
  const dupes = [];
  for (let i = 0; i < 200; i += 1) {
    const body = newLead();
    dupes.push(body);
    const res = await fetch(ours.url, { method: 'POST', headers, body });
    if (res.status !== 201) throw new Error(`seeding a duplicate got ${res.status}`);
  }
  const { child: bareChild, url: bareUrl } = await startBare(join(dir, 'bare.sqlite'));
  const { child: bareNormalChild, url: bareNormalUrl } = await startBare(join(dir, 'bare-normal.sqlite'), 'NORMAL');
  // The same duplicates on the bare server, so that its duplicate rows compare like with like.
  for (const body of dupes) {
    const res = await fetch(bareUrl, { method: 'POST', headers, body });
    if (res.status !== 201) throw new Error(`seeding a duplicate on the bare server got ${res.status}`);
  }
  const { pg, skipped } = await startBenchPostgres();
  let pgOne = null;
  const pgTwo = [];
  let oneUrl;
  let twoUrl;
  if (pg) {
    console.log(
      `PostgreSQL ${pg.version}: ${Object.entries(pg.settings)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')}; DATABASE_POOL_MAX 10 per instance`,
    );
    // One database per setup, each starting empty, so that the two setups store the same amount over the run.
    oneUrl = await pg.createDatabase('bench_one');
    twoUrl = await pg.createDatabase('bench_two');
    for (const url of [oneUrl, twoUrl]) await trackFunctions(url);
    const pgEnv = (url) => ({ DATABASE_URL: url });
    pgOne = await startOurs(join(dir, 'unused-one.sqlite'), pgEnv(oneUrl));
    // The second instance starts once the first has migrated the database.
    pgTwo.push(await startOurs(join(dir, 'unused-two-a.sqlite'), pgEnv(twoUrl)));
    pgTwo.push(await startOurs(join(dir, 'unused-two-b.sqlite'), pgEnv(twoUrl)));
    for (const [i, body] of dupes.entries()) {
      for (const url of [pgOne.url, pgTwo[i % 2].url]) {
        const res = await fetch(url, { method: 'POST', headers, body });
        if (res.status !== 201) throw new Error(`seeding a duplicate on PostgreSQL got ${res.status}`);
      }
    }
  } else {
    console.log(`PostgreSQL: skipped — ${skipped}`);
  }
  const pgTwoUrls = pgTwo.map((s) => s.url);
  const pgTwoPids = pgTwo.map((s) => s.child.pid);
  const dup = (i) => dupes[i % dupes.length];
  console.log('\nPOST /leads');
  const ratio = (r, bare) => `throughput ${(r.rps / bare.rps).toFixed(2)}×, p99 ${(r.p99 / bare.p99).toFixed(2)}×`;
  for (const c of CONNECTIONS) {
    const at = (url, next) => ({ url, connections: c, seconds: SECONDS, next, headers });
    // load() passes the body's index; newLead's argument is a prefix, so it is called without one.
    const lead = () => newLead();
    const row = { c };
    row.bare = await withCpu(() => load(at(bareUrl, lead)), [bareChild.pid]);
    row.bareNormal = await withCpu(() => load(at(bareNormalUrl, lead)), [bareNormalChild.pid]);
    row.oursNew = await withCpu(() => load(at(ours.url, lead)), [ours.child.pid]);
    row.bareDup = await withCpu(() => load(at(bareUrl, dup)), [bareChild.pid]);
    row.bare422 = await withCpu(() => load(at(bareUrl, invalid)), [bareChild.pid]);
    row.oursDup = await withCpu(() => load(at(ours.url, dup)), [ours.child.pid]);
    row.ours422 = await withCpu(() => load(at(ours.url, invalid)), [ours.child.pid]);
    if (pg) {
      row.pgNew = await withDecisionTime(oneUrl, () => withCpu(() => load(at(pgOne.url, lead)), [pgOne.child.pid], pg.pid));
      row.pgDup = await withCpu(() => load(at(pgOne.url, dup)), [pgOne.child.pid], pg.pid);
      row.pg2New = await withDecisionTime(twoUrl, () => withCpu(() => load(at(pgTwoUrls, lead)), pgTwoPids, pg.pid));
      row.pg2Dup = await withCpu(() => load(at(pgTwoUrls, dup)), pgTwoPids, pg.pid);
    }
    // A figure of refused requests measures nothing: every kind must get the answer it stands for.
    const expected = {
      ...Object.fromEntries(['bare', 'bareNormal', 'oursNew', 'pgNew', 'pg2New'].map((k) => [k, '201'])),
      ...Object.fromEntries(['bareDup', 'oursDup', 'pgDup', 'pg2Dup'].map((k) => [k, '200'])),
      ...Object.fromEntries(['bare422', 'ours422'].map((k) => [k, '422'])),
    };
    for (const [key, status] of Object.entries(expected)) {
      const other = row[key] && Object.keys(row[key].statuses).filter((s) => s !== status);
      if (other?.length) throw new Error(`bench: ${key} at ${c} connections got ${other.join(', ')}, not only ${status}`);
    }
    const line = (label, r, cpu = false) =>
      console.log(`  ${String(c).padStart(2)} conn  ${label.padEnd(18)}${fmt(r)}${cpu && r.cpu ? fmtCpu(r) : ''}`);
    line('new (bare FULL)', row.bare, true);
    line('new (bare NORMAL)', row.bareNormal, true);
    line('new (ours)', row.oursNew, true);
    line('dup (bare FULL)', row.bareDup, true);
    line('duplicate', row.oursDup, true);
    line('422 (bare FULL)', row.bare422, true);
    line('422', row.ours422, true);
    console.log(`  ${String(c).padStart(2)} conn  ours/bare FULL    ${ratio(row.oursNew, row.bare)}`);
    console.log(`  ${String(c).padStart(2)} conn  ours/bare NORMAL  ${ratio(row.oursNew, row.bareNormal)}`);
    console.log(`  ${String(c).padStart(2)} conn  dup ours/bare     ${ratio(row.oursDup, row.bareDup)}`);
    console.log(`  ${String(c).padStart(2)} conn  422 ours/bare     ${ratio(row.ours422, row.bare422)}`);
    if (pg) {
      line('new (pg ×1)', row.pgNew, true);
      line('duplicate (pg ×1)', row.pgDup, true);
      line('new (pg ×2)', row.pg2New, true);
      line('duplicate (pg ×2)', row.pg2Dup, true);
      console.log(`  ${String(c).padStart(2)} conn  pg ×1/bare        ${ratio(row.pgNew, row.bare)}`);
      console.log(`  ${String(c).padStart(2)} conn  pg ×2/bare        ${ratio(row.pg2New, row.bare)}`);
      console.log(
        `  ${String(c).padStart(2)} conn  pg ×1/ours SQLite ${(row.pgNew.rps / row.oursNew.rps).toFixed(2)}×; pg ×2/pg ×1 ${(row.pg2New.rps / row.pgNew.rps).toFixed(2)}×`,
      );
      const held = (r) => (r.decisionMs === null ? '?' : `${r.decisionMs.toFixed(2)} ms`);
      console.log(
        `  ${String(c).padStart(2)} conn  decision inside PostgreSQL per lead (lock wait included): ×1 ${held(row.pgNew)}, ×2 ${held(row.pg2New)}`,
      );
    }
    results.push(row);
  }
  printTable(results);
  const ours16 = results.find((r) => r.c === 16)?.oursNew;
  await stop(bareChild);
  await stop(bareNormalChild);
  await stop(ours.child);
  for (const s of [pgOne, ...pgTwo]) if (s) await stop(s.child);
  await pg?.stop();

  // 2. Card latency: from the 201 to the sandbox receiving sendMessage, over 200 leads.
  const sandbox = await startSandbox();
  const withBot = await startOurs(join(dir, 'cards.sqlite'), {
    TELEGRAM_BOT_TOKEN: sandbox.token,
    TELEGRAM_API_ROOT: sandbox.url,
    LEADS_CHAT_ID: '-1001000000001',
    ADMIN_CHAT_ID: '-1001000000002',
  });
  const acked = new Map();
  for (let i = 0; i < 200; i += 1) {
    const res = await fetch(withBot.url, { method: 'POST', headers, body: newLead() });
    const at = Date.now();
    acked.set((await res.json()).lead_number, at);
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, 1500));
  const latencies = [];
  for (const call of sandbox.callsOf('sendMessage')) {
    const m = /Заявка #(\d+)/.exec(String(call.params.text));
    if (m && acked.has(Number(m[1]))) latencies.push(Math.max(0, call.at - acked.get(Number(m[1]))));
  }
  latencies.sort((a, b) => a - b);
  console.log(
    `\ncard latency (201 → sandbox sendMessage), ${latencies.length} of 200 cards: p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms`,
  );
  await stop(withBot.child);
  await sandbox.stop();

  // 3. 100,000 stored leads: memory, and whether p99 holds.
  const bigDb = join(dir, 'ours.sqlite');
  const db = new Database(bigDb);
  const have = db.prepare('select count(*) as n from leads').get().n;
  const insert =
    db.prepare(`insert into leads (request_id, name, telegram, telegram_key, phone, ip_hash, created_at, published_at, chat_id, message_id)
    values (?, 'Старый Лид', ?, ?, ?, 'x', ?, ?, '-1001000000001', ?)`);
  const now = Date.now();
  db.transaction(() => {
    for (let i = have; i < 100_000; i += 1) {
      const t = now - (100_000 - i) * 60_000;
      insert.run(crypto.randomUUID(), `@old_${i}`, `@old_${i}`, `+1555${String(i).padStart(7, '0')}`, t, t, i + 1);
    }
  })();
  db.close();
  const big = await startOurs(bigDb);
  const rssIdle = rssMb(big.child.pid);
  const bigRun = await load({ url: big.url, connections: 16, seconds: SECONDS, next: () => newLead(), headers });
  const rssAfter = rssMb(big.child.pid);
  console.log(`\n100,000 stored leads: RSS ${rssIdle.toFixed(0)} MB idle, ${rssAfter.toFixed(0)} MB after load`);
  console.log(`  16 conn new leads ${fmt(bigRun)}`);
  if (ours16)
    console.log(
      `  p99 at 100k vs fresh: ${(bigRun.p99 / ours16.p99).toFixed(2)}× (${bigRun.p99.toFixed(1)} vs ${ours16.p99.toFixed(1)} ms)`,
    );
  await stop(big.child);
}

// Ctrl-C: exit through the exit hooks, which stop the bench's PostgreSQL and remove its directory.
process.once('SIGINT', () => process.exit(130));

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    killAll(children);
    rmSync(dir, { recursive: true, force: true });
  });
