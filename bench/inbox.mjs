#!/usr/bin/env node
// The inbox's reads with 100,000 leads: `GET /inbox/api/leads` (the first page, a filter, searches) and
// `GET /inbox/api/charts` (all sources and one), each timed over BENCH_INBOX_RUNS sequential calls with signed launch
// data, median and p95 printed per query. SQLite, or PostgreSQL with BENCH_INBOX_DATABASE=postgres (a throwaway
// server, as the tests start one). Needs `npm run build` first (the built server, server/dist, and the sandbox's dist
// for the signing): `npm run bench:inbox`, `BENCH_INBOX_DATABASE=postgres npm run bench:inbox`. Prints figures only.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DAYS, fillPostgres, fillSqlite } from './fill-leads.mjs';
import { percentile } from './load.mjs';
import { killAll, startServer as startProcess, stop } from './processes.mjs';

const require = createRequire(import.meta.url);
const { startSandbox, signInitData, DEFAULT_USER } = require('../sandbox/dist/index.js');
const { startPostgres } = require('../scripts/lib/throwaway-postgres.cjs');
const POSTGRES = process.env.BENCH_INBOX_DATABASE === 'postgres';
const LEADS = Number(process.env.BENCH_INBOX_LEADS ?? 100_000);
const RUNS = Number(process.env.BENCH_INBOX_RUNS ?? 50);
const dir = mkdtempSync(join(tmpdir(), 'leads-bench-inbox-'));
const children = [];
/** The throwaway PostgreSQL server (BENCH_INBOX_DATABASE=postgres), stopped at the end whatever happened. */
let postgres = null;

const startServer = (env) => startProcess(env, children);

async function main() {
  const sandbox = await startSandbox();
  const path = join(dir, 'inbox.sqlite');
  postgres = POSTGRES ? await startPostgres() : null;
  const databaseUrl = postgres ? await postgres.createDatabase('leads_bench_inbox') : null;
  const env = {
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATABASE_PATH: path }),
    LEADS_SECRET: 'bench-secret-0123456789abcdef',
    LEADS_IP_SALT: 'bench-salt',
    TELEGRAM_BOT_TOKEN: sandbox.token,
    TELEGRAM_API_ROOT: sandbox.url,
    LEADS_CHAT_ID: '-1001000000001',
    ADMIN_CHAT_ID: '-1001000000002',
    // A manager by the list: the figures are the queries', not getChatMember's.
    LEADS_MANAGER_IDS: String(DEFAULT_USER.id),
    // One user sends every request here: the per-caller throttles must not be what is measured.
    LEADS_THROTTLE_INBOX: '1000000000',
    LEADS_THROTTLE_EXPORT: '1000000000',
    LOG_LEVEL: 'warn',
  };
  // The schema by the server's own migrations, then the leads straight into the database, then the server again.
  await stop((await startServer(env)).child);
  const filling = Date.now();
  if (databaseUrl) await fillPostgres(databaseUrl, Date.now(), LEADS);
  else fillSqlite(path, Date.now(), LEADS);
  console.log(`filled ${LEADS} leads over ${DAYS} days in ${((Date.now() - filling) / 1000).toFixed(1)} s`);
  const server = await startServer(env);

  const queries = [
    ['leads: first page', 'leads'],
    ['leads: status + source', 'leads?status=in_progress&source=wedding'],
    ['leads: since a date (7 days)', `leads?since=${new Date(Date.now() - 7 * 86_400_000).toISOString()}`],
    ['leads: search a name part', `leads?q=${encodeURIComponent('Орлова')}`],
    ['leads: search phone digits', 'leads?q=9990012345'],
    ['leads: search a number', 'leads?q=%2342000'],
    ['charts: all sources', 'charts'],
    ['charts: one source', 'charts?source=wedding'],
    ['charts: no source', 'charts?source=none'],
  ];
  console.log(`\n${RUNS} sequential calls each, ${postgres ? `PostgreSQL ${postgres.version}` : 'SQLite'}, ${LEADS} leads:\n`);
  console.log('| query | median | p95 | answer |');
  console.log('|---|---|---|---|');
  for (const [name, path] of queries) {
    const times = [];
    let summary = '';
    for (let i = 0; i < RUNS + 3; i += 1) {
      const auth = `tma ${signInitData({ botToken: sandbox.token, user: DEFAULT_USER })}`;
      const started = performance.now();
      const res = await fetch(`${server.url}/inbox/api/${path}`, { headers: { Authorization: auth } });
      const body = await res.json();
      const took = performance.now() - started;
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
      // The first three warm the caches up and are not counted.
      if (i >= 3) times.push(took);
      summary = body.leads
        ? `${body.leads.length} leads`
        : `${body.per_day.reduce((n, s) => n + s.counts.reduce((a, b) => a + b, 0), 0)} in 30 days`;
    }
    times.sort((a, b) => a - b);
    console.log(`| ${name} | ${percentile(times, 50).toFixed(1)} ms | ${percentile(times, 95).toFixed(1)} ms | ${summary} |`);
  }
  await stop(server.child);
  await sandbox.stop();
}

process.once('SIGINT', () => process.exit(130));

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    killAll(children);
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
