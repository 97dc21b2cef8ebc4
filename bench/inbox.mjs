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
import Database from 'better-sqlite3';
import pg from 'pg';
import { freePort, run, waitForHttp } from '../e2e/stack.mjs';
import { percentile } from './load.mjs';

const require = createRequire(import.meta.url);
const { startSandbox, signInitData, DEFAULT_USER } = require('../sandbox/dist/index.js');
const { startPostgres } = require('../scripts/lib/throwaway-postgres.cjs');
const POSTGRES = process.env.BENCH_INBOX_DATABASE === 'postgres';
const LEADS = Number(process.env.BENCH_INBOX_LEADS ?? 100_000);
const RUNS = Number(process.env.BENCH_INBOX_RUNS ?? 50);
const DAYS = 60;
const SOURCES = ['wedding', 'corporate', 'birthday', 'school', null];
const STATUSES = ['new', 'in_progress', 'won', 'lost', 'spam'];
const NAMES = ['Анна Ким', 'Борис Ли', 'Мария Орлова', 'Глеб Смирнов', 'Ольга Пак', 'Иван Петров'];
const dir = mkdtempSync(join(tmpdir(), 'leads-bench-inbox-'));
const children = [];
/** The throwaway PostgreSQL server (BENCH_INBOX_DATABASE=postgres), stopped at the end whatever happened. */
let postgres = null;

async function startServer(env) {
  const port = await freePort();
  const child = run('server', ['server/dist/main.js'], { ...env, PORT: String(port) });
  children.push(child);
  await waitForHttp(`http://127.0.0.1:${port}/health`, child, 'server');
  return { child, url: `http://127.0.0.1:${port}` };
}
async function stop(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

const LEAD_COLUMNS = [
  'id',
  'request_id',
  'name',
  'telegram',
  'telegram_key',
  'phone',
  'ip_hash',
  'created_at',
  'next_attempt_at',
  'published_at',
  'chat_id',
  'message_id',
  'status',
  'status_changed_at',
  'status_changed_by',
  'source_landing',
];
const CHANGE_COLUMNS = ['lead_id', 'from_status', 'to_status', 'user_id', 'user_name', 'at'];

/**
 * LEADS leads over the last DAYS days, oldest first, published; every fifth without a source; statuses spread, each
 * lead not `new` with one or two history rows (its first change 5 minutes to 2 days after its creation): the rows of
 * `leads` and of `lead_status_changes`, in LEAD_COLUMNS' and CHANGE_COLUMNS' order.
 */
function* rows(now) {
  const span = DAYS * 24 * 3600 * 1000;
  for (let i = 1; i <= LEADS; i += 1) {
    const created = now - span + Math.floor((span * i) / (LEADS + 1));
    const status = STATUSES[Math.floor(i / 5) % 5];
    const first = created + 300_000 + ((i * 7919) % (2 * 24 * 3600 * 1000));
    const changed = status === 'new' ? null : status === 'in_progress' || status === 'spam' ? first : first + 3_600_000;
    const username = `client_${i}`;
    const lead = [
      i,
      crypto.randomUUID(),
      `${NAMES[i % NAMES.length]} ${i}`,
      `@${username}`,
      username,
      `+7999${String(i).padStart(7, '0')}`,
      'x',
      created,
      created,
      created,
      '-1001000000001',
      i,
      status,
      changed,
      changed === null ? null : 'Мария Менеджер',
      SOURCES[i % SOURCES.length],
    ];
    const changes = [];
    if (status !== 'new') changes.push([i, 'new', status === 'spam' ? 'spam' : 'in_progress', 501, 'Мария Менеджер', first]);
    if (status === 'won' || status === 'lost') changes.push([i, 'in_progress', status, 501, 'Мария Менеджер', first + 3_600_000]);
    yield { lead, changes };
  }
}

/** The rows into the SQLite file: one transaction of prepared inserts, a few seconds. */
function fillSqlite(path, now) {
  const db = new Database(path);
  const insert = (table, columns) =>
    db.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
  const lead = insert('leads', LEAD_COLUMNS);
  const change = insert('lead_status_changes', CHANGE_COLUMNS);
  db.transaction(() => {
    for (const row of rows(now)) {
      lead.run(...row.lead);
      for (const c of row.changes) change.run(...c);
    }
  })();
  db.close();
}

/** The rows into PostgreSQL: multi-row inserts of 1,000 in one transaction, then ANALYZE, as after a real load. */
async function fillPostgres(url, now) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const flush = async (table, columns, batch) => {
    if (batch.length === 0) return;
    const values = batch.map((row, r) => `(${row.map((_, c) => `$${r * row.length + c + 1}`).join(', ')})`).join(', ');
    await client.query(`insert into ${table} (${columns.join(', ')}) values ${values}`, batch.flat());
    batch.length = 0;
  };
  await client.query('begin');
  const leads = [];
  const changes = [];
  for (const row of rows(now)) {
    leads.push(row.lead);
    changes.push(...row.changes);
    if (leads.length === 1000) {
      await flush('leads', LEAD_COLUMNS, leads);
      await flush('lead_status_changes', CHANGE_COLUMNS, changes);
    }
  }
  await flush('leads', LEAD_COLUMNS, leads);
  await flush('lead_status_changes', CHANGE_COLUMNS, changes);
  await client.query('commit');
  await client.query('analyze');
  await client.end();
}

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
    LOG_LEVEL: 'warn',
  };
  // The schema by the server's own migrations, then the leads straight into the database, then the server again.
  await stop((await startServer(env)).child);
  const filling = Date.now();
  if (databaseUrl) await fillPostgres(databaseUrl, Date.now());
  else fillSqlite(path, Date.now());
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
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await postgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
