#!/usr/bin/env node
// What heavy reads do to POST /leads and /health beside them, with 100,000 leads: the CSV export (`GET
// /leads/export.csv`, the code of the inbox's CSV and of /stickers_export) once and 8 at once, and 20 inbox searches
// that match nothing at once, each repeated for the scenario's time. Meanwhile one client posts leads one after
// another and another asks /health, and the worst and median answer times of each are printed, with how long the
// exports took. SQLite, or PostgreSQL with BENCH_STALL_DATABASE=postgres. Needs `npm run build` first:
// `npm run bench:stall`. Prints figures only.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fillPostgres, fillSqlite } from './fill-leads.mjs';
import { percentile } from './load.mjs';
import { killAll, startServer as startProcess, stop } from './processes.mjs';

const require = createRequire(import.meta.url);
const { startSandbox, signInitData, DEFAULT_USER } = require('../sandbox/dist/index.js');
const { startPostgres } = require('../scripts/lib/throwaway-postgres.cjs');
const POSTGRES = process.env.BENCH_STALL_DATABASE === 'postgres';
const LEADS = Number(process.env.BENCH_STALL_LEADS ?? 100_000);
/** The searches scenario runs this long; each export scenario as long as its exports. */
const SEARCH_SECONDS = Number(process.env.BENCH_STALL_SEARCH_SECONDS ?? 5);
const SECRET = 'bench-secret-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'leads-bench-stall-'));
const children = [];
let postgres = null;

const startServer = (env) => startProcess(env, children);

let posted = 0;
/** One new lead: its own request, contacts and address. */
function newLead() {
  posted += 1;
  const n = String(posted).padStart(6, '0');
  return JSON.stringify({
    request_id: crypto.randomUUID(),
    name: 'Анна Бенч',
    telegram: `@bench_${n}`,
    phone: `+7988${n}0`,
    client_ip: `198.51.${Math.floor(posted / 250) % 250}.${posted % 250}`,
  });
}

/** Calls `once` one after another until `running()` is false; the answer times in ms. */
async function probe(once, running) {
  const times = [];
  while (running()) {
    const started = performance.now();
    await once();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

async function scenario(server, name, work) {
  let busy = true;
  const posts = probe(
    async () => {
      const res = await fetch(`${server.url}/leads`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Stickers-Leads-Secret': SECRET },
        body: newLead(),
      });
      await res.text();
      if (res.status !== 201) throw new Error(`POST /leads: ${res.status}`);
    },
    () => busy,
  );
  const health = probe(
    async () => {
      const res = await fetch(`${server.url}/health`);
      await res.text();
    },
    () => busy,
  );
  const started = performance.now();
  const detail = await work();
  const took = performance.now() - started;
  busy = false;
  const [p, h] = [await posts, await health];
  const ms = (v) => `${v.toFixed(0)} ms`;
  console.log(
    `| ${name} | ${ms(took)} | ${ms(p[p.length - 1])} | ${ms(percentile(p, 50))} | ${p.length} | ${ms(h[h.length - 1])} | ${detail} |`,
  );
}

async function exportCsv(server) {
  const res = await fetch(`${server.url}/leads/export.csv`, { headers: { 'X-Stickers-Leads-Secret': SECRET } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`export: ${res.status}`);
  return text.split('\r\n').length - 2;
}

async function main() {
  const sandbox = await startSandbox();
  const path = join(dir, 'stall.sqlite');
  postgres = POSTGRES ? await startPostgres() : null;
  const databaseUrl = postgres ? await postgres.createDatabase('leads_bench_stall') : null;
  const env = {
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATABASE_PATH: path }),
    LEADS_SECRET: SECRET,
    LEADS_IP_SALT: 'bench-salt',
    LEADS_HOURLY_LIMIT: '1000000',
    // One caller sends every request here: the per-caller throttles must not be what is measured.
    LEADS_THROTTLE_SUBMIT: '1000000000',
    LEADS_THROTTLE_API: '1000000000',
    LEADS_THROTTLE_EXPORT: '1000000000',
    LEADS_IP_LIMIT: '1000000',
    TELEGRAM_BOT_TOKEN: sandbox.token,
    TELEGRAM_API_ROOT: sandbox.url,
    LEADS_CHAT_ID: '-1001000000001',
    ADMIN_CHAT_ID: '-1001000000002',
    LEADS_MANAGER_IDS: String(DEFAULT_USER.id),
    LOG_LEVEL: 'warn',
  };
  await stop((await startServer(env)).child);
  if (databaseUrl) await fillPostgres(databaseUrl, Date.now(), LEADS);
  else fillSqlite(path, Date.now(), LEADS);
  const server = await startServer(env);
  // Warm up (the file's pages in the cache, the routes compiled), then one export alone, timed.
  await exportCsv(server);
  const alone = performance.now();
  await exportCsv(server);
  const aloneMs = performance.now() - alone;

  console.log(`\n${postgres ? `PostgreSQL ${postgres.version}` : 'SQLite'}, ${LEADS} leads; one export alone: ${aloneMs.toFixed(0)} ms`);
  console.log('POST /leads and /health each one after another meanwhile:\n');
  console.log('| beside | took | POST /leads worst | median | posts | /health worst | what |');
  console.log('|---|---|---|---|---|---|---|');
  await scenario(server, 'nothing (1 s)', async () => {
    await new Promise((r) => setTimeout(r, 1000));
    return '';
  });
  await scenario(server, '1 CSV export', async () => `${await exportCsv(server)} rows`);
  await scenario(server, '8 CSV exports at once', async () => {
    const rows = await Promise.all(Array.from({ length: 8 }, () => exportCsv(server)));
    return `${rows[0]} rows each`;
  });
  await scenario(server, `20 searches at once, again and again (${SEARCH_SECONDS} s)`, async () => {
    const until = performance.now() + SEARCH_SECONDS * 1000;
    let searches = 0;
    let answers = {};
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (performance.now() < until) {
          const auth = `tma ${signInitData({ botToken: sandbox.token, user: DEFAULT_USER })}`;
          const res = await fetch(`${server.url}/inbox/api/leads?q=${encodeURIComponent('нет такого')}`, {
            headers: { Authorization: auth },
          });
          await res.text();
          answers[res.status] = (answers[res.status] ?? 0) + 1;
          searches += 1;
        }
      }),
    );
    return `${searches} searches (${Object.entries(answers)
      .map(([s, n]) => `${n} × ${s}`)
      .join(', ')})`;
  });
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
