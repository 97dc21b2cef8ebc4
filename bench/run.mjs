#!/usr/bin/env node
// `npm run bench`: POST /leads throughput and latency (ours vs a bare node:http + better-sqlite3 server doing the
// same work), card latency through the sandbox, and memory and p99 with 100,000 stored leads. Prints figures only;
// nothing here is a pass/fail test. Needs `npm run build` first (npm run bench does it).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { freePort, run, waitForHttp } from '../e2e/stack.mjs';
import { load, percentile } from './load.mjs';

const require = createRequire(import.meta.url);
const { startSandbox } = require('../sandbox/dist/index.js');
const SECRET = 'bench-secret-0123456789abcdef';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? '1,16,64').split(',').map(Number);
const dir = mkdtempSync(join(tmpdir(), 'leads-bench-'));
const children = [];

/** Starts a server and resolves once its /health answers over HTTP. */
async function start(name, args, env, url) {
  const child = run(name, args, env);
  children.push(child);
  await waitForHttp(url.replace('/leads', '/health'), child, name);
  return child;
}
async function stop(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

let seq = 0;
const newLead = () => {
  seq += 1;
  return JSON.stringify({
    request_id: crypto.randomUUID(),
    name: 'Бенчмарк Тестович',
    telegram: `@bench_${process.pid}_${seq}`,
    phone: `+7${String(9_000_000_000 + ((process.pid * 1_000_003 + seq) % 999_999_999))}`,
    date: '14 февраля',
    guests: '30',
    comment: 'Нагрузочный тест: стикеры для свадьбы',
    client_ip: `10.${(seq >> 16) & 255}.${(seq >> 8) & 255}.${seq & 255}`,
  });
};
const invalid = () => JSON.stringify({ request_id: crypto.randomUUID(), name: 'A', telegram: '@x', phone: '12' });

const serverEnv = (db, extra = {}) => ({
  PORT: '0',
  DATABASE_PATH: db,
  LEADS_SECRET: SECRET,
  LEADS_IP_SALT: 'bench-salt',
  LEADS_IP_LIMIT: '1000000000',
  LEADS_HOURLY_LIMIT: '1000000000',
  LOG_LEVEL: 'warn',
  ...extra,
});

async function startOurs(db, extra = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/leads`;
  return { child: await start('server', ['server/dist/main.js'], serverEnv(db, { PORT: String(port), ...extra }), url), url };
}
async function startBare(db) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/leads`;
  return { child: await start('bare', ['bench/bare-server.mjs'], serverEnv(db, { PORT: String(port) }), url), url };
}

const fmt = (r) =>
  `${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  (${Object.entries(
    r.statuses,
  )
    .map(([s, n]) => `${s}×${n}`)
    .join(' ')}${r.errors ? `, ${r.errors} errors` : ''})`;

async function main() {
  console.log(
    `machine: ${cpus().length} × ${cpus()[0].model}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}; ${SECONDS} s per run`,
  );
  const headers = { 'X-Stickers-Leads-Secret': SECRET };
  const results = [];

  // 1. Throughput and latency: ours (publishing paused: no bot token, the API alone) and the bare server.
  const ours = await startOurs(join(dir, 'ours.sqlite'));
  const dupes = [];
  for (let i = 0; i < 200; i += 1) {
    const body = newLead();
    dupes.push(body);
    const res = await fetch(ours.url, { method: 'POST', headers, body });
    if (res.status !== 201) throw new Error(`seeding a duplicate got ${res.status}`);
  }
  const { child: bareChild, url: bareUrl } = await startBare(join(dir, 'bare.sqlite'));
  console.log('\nPOST /leads');
  for (const c of CONNECTIONS) {
    const bare = await load({ url: bareUrl, connections: c, seconds: SECONDS, next: newLead, headers });
    const oursNew = await load({ url: ours.url, connections: c, seconds: SECONDS, next: newLead, headers });
    const oursDup = await load({ url: ours.url, connections: c, seconds: SECONDS, next: (i) => dupes[i % dupes.length], headers });
    const ours422 = await load({ url: ours.url, connections: c, seconds: SECONDS, next: invalid, headers });
    console.log(`  ${String(c).padStart(2)} conn  new (bare)  ${fmt(bare)}`);
    console.log(`  ${String(c).padStart(2)} conn  new (ours)  ${fmt(oursNew)}`);
    console.log(`  ${String(c).padStart(2)} conn  duplicate   ${fmt(oursDup)}`);
    console.log(`  ${String(c).padStart(2)} conn  422         ${fmt(ours422)}`);
    console.log(
      `  ${String(c).padStart(2)} conn  ours/bare   throughput ${(oursNew.rps / bare.rps).toFixed(2)}×, p99 ${(oursNew.p99 / bare.p99).toFixed(2)}×`,
    );
    results.push({ c, bare, oursNew, oursDup, ours422 });
  }
  const ours16 = results.find((r) => r.c === 16)?.oursNew;
  await stop(bareChild);
  await stop(ours.child);

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
    db.prepare(`insert into leads (request_id, name, telegram, telegram_key, phone, ip_hash, created_at, next_attempt_at, published_at, chat_id, message_id)
    values (?, 'Старый Лид', ?, ?, ?, 'x', ?, ?, ?, '-1001000000001', ?)`);
  const now = Date.now();
  db.transaction(() => {
    for (let i = have; i < 100_000; i += 1) {
      const t = now - (100_000 - i) * 60_000;
      insert.run(crypto.randomUUID(), `@old_${i}`, `@old_${i}`, `+1555${String(i).padStart(7, '0')}`, t, t, t, i + 1);
    }
  })();
  db.close();
  const big = await startOurs(bigDb);
  const rssIdle = rssMb(big.child.pid);
  const bigRun = await load({ url: big.url, connections: 16, seconds: SECONDS, next: newLead, headers });
  const rssAfter = rssMb(big.child.pid);
  console.log(`\n100,000 stored leads: RSS ${rssIdle.toFixed(0)} MB idle, ${rssAfter.toFixed(0)} MB after load`);
  console.log(`  16 conn new leads ${fmt(bigRun)}`);
  if (ours16)
    console.log(
      `  p99 at 100k vs fresh: ${(bigRun.p99 / ours16.p99).toFixed(2)}× (${bigRun.p99.toFixed(1)} vs ${ours16.p99.toFixed(1)} ms)`,
    );
  await stop(big.child);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
