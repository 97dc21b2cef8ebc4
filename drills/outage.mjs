#!/usr/bin/env node
// `npm run drill:outage`: Telegram answers 5xx for 2 hours, then hangs for 1 hour, then gives 429s for 30 minutes —
// on a simulated clock (the outbox runs on the server's own code, in-process; time moves 2 s per tick). Afterwards:
// every card is delivered exactly once, the "cards are not published" alert came at most once per 30 simulated
// minutes, and every retry followed docs/requirements.md §4.2. Prints the counts; exits 1 when a rule is broken.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
require('reflect-metadata');
const { Test } = require('@nestjs/testing');
const { startSandbox } = require('../sandbox/dist/index.js');
const { AppModule } = require('../server/dist/app.module.js');
const { Clock, SCHEDULED_JOBS } = require('../server/dist/clock/clock.js');
const { loadServerConfig } = require('../server/dist/config/config.js');
const { BOT_POLLING } = require('../server/dist/bot/bot.launcher.js');
const { OutboxService } = require('../server/dist/outbox/outbox.service.js');
const { LeadsService } = require('../server/dist/leads/leads.service.js');
const { checkSubmission } = require('../server/dist/leads/leads.dto.js');
const { DatabaseHandle } = require('../server/dist/database/database.module.js');
const { RETRY_DELAYS_MS } = require('../server/dist/outbox/retry-schedule.js');

const SEC = 1000;
const MIN = 60 * SEC;
const TICK = 2 * SEC;
const LEADS_CHAT = -1001000000001;
const ADMIN_CHAT = -1001000000002;
const LEADS = Number(process.env.DRILL_LEADS ?? 30);

class SimulatedClock extends Clock {
  t = Date.UTC(2026, 10, 29, 6, 0, 0);
  now() {
    return this.t;
  }
}
const clock = new SimulatedClock();
const alertTimes = [];
const logger = {
  log: (m) => {
    const text = typeof m === 'string' ? m : (m?.msg ?? '');
    if (text === 'alert publish_failing sent') alertTimes.push(clock.now());
  },
  error: () => undefined,
  warn: () => undefined,
  debug: () => undefined,
  verbose: () => undefined,
  fatal: () => undefined,
};

const dir = mkdtempSync(join(tmpdir(), 'leads-outage-'));
const sandbox = await startSandbox();
const config = loadServerConfig({
  DATABASE_PATH: join(dir, 'leads.sqlite'),
  LEADS_SECRET: 'drill-secret-0123456789abcdef',
  LEADS_IP_SALT: 'drill-salt',
  LEADS_IP_LIMIT: '1000000',
  LEADS_HOURLY_LIMIT: '1000000',
  // One caller sends every request here: the per-caller throttles must not be what is measured.
  LEADS_THROTTLE_SUBMIT: '1000000000',
  LEADS_THROTTLE_API: '1000000000',
  LEADS_THROTTLE_EXPORT: '1000000000',
  TELEGRAM_BOT_TOKEN: sandbox.token,
  TELEGRAM_API_ROOT: sandbox.url,
  LEADS_CHAT_ID: String(LEADS_CHAT),
  ADMIN_CHAT_ID: String(ADMIN_CHAT),
  TELEGRAM_TIMEOUT_MS: '100',
});
const moduleRef = await Test.createTestingModule({ imports: [AppModule.register(config)] })
  .overrideProvider(Clock)
  .useValue(clock)
  .overrideProvider(SCHEDULED_JOBS)
  .useValue(false)
  .overrideProvider(BOT_POLLING)
  .useValue(false)
  .setLogger(logger)
  .compile();
const app = moduleRef.createNestApplication({ logger });
await app.init();
const outbox = app.get(OutboxService);
const leads = app.get(LeadsService);
const sqlite = app.get(DatabaseHandle).sqlite;

async function runFor(ms, onTick = () => undefined) {
  const end = clock.now() + ms;
  while (clock.now() < end) {
    clock.t += TICK;
    await onTick();
    await outbox.tick();
  }
}

// Phase 1: 5xx for 2 simulated hours; the leads arrive during the first 10 minutes.
sandbox.inject({
  method: 'sendMessage',
  kind: 'server_error',
  status: 502,
  description: 'Bad Gateway',
  count: 1_000_000,
  chat_id: LEADS_CHAT,
});
let submitted = 0;
const phase1Start = clock.now();
await runFor(2 * 60 * MIN, async () => {
  if (submitted < LEADS && clock.now() - phase1Start >= submitted * 20 * SEC) {
    submitted += 1;
    const body = {
      request_id: crypto.randomUUID(),
      name: 'Простой Телеграма',
      telegram: `@outage_${submitted}`,
      phone: `+7922${String(submitted).padStart(7, '0')}`,
    };
    await leads.submit(checkSubmission(body, config.leads, clock.now()), `10.2.0.${submitted}`);
  }
});
// Phase 2: Telegram hangs for 1 hour (each call is cut off by TELEGRAM_TIMEOUT_MS).
sandbox.clearFaults();
sandbox.inject({ method: 'sendMessage', kind: 'hang', count: 1_000_000, chat_id: LEADS_CHAT });
await runFor(60 * MIN);
sandbox.releaseHanging();
// Phase 3: flood control for 30 minutes: each call gets 429 with retry_after 120 s.
sandbox.clearFaults();
sandbox.inject({ method: 'sendMessage', kind: 'retry_after', retry_after: 120, count: 1_000_000, chat_id: LEADS_CHAT });
const floodStart = clock.now();
await runFor(30 * MIN);
// Telegram is back.
sandbox.clearFaults();
const outageEnd = clock.now();
await runFor(20 * MIN);

// Checks.
const problems = [];
const ids = sqlite.prepare('select id from leads').pluck().all();
const cards = new Map();
for (const m of sandbox.messages(LEADS_CHAT)) {
  const n = /^🆕 Заявка #(\d+)\n/.exec(m.text);
  if (n) cards.set(Number(n[1]), (cards.get(Number(n[1])) ?? 0) + 1);
}
const undelivered = ids.filter((id) => !cards.has(id));
const doubled = ids.filter((id) => (cards.get(id) ?? 0) > 1);
if (undelivered.length) problems.push(`${undelivered.length} cards never delivered`);
if (doubled.length) problems.push(`${doubled.length} leads with more than one card`);

const gaps = alertTimes.slice(1).map((t, i) => t - alertTimes[i]);
if (alertTimes.length === 0) problems.push('no alert during a 3.5-hour outage');
if (gaps.some((g) => g < 30 * MIN)) problems.push(`alerts closer than 30 minutes: ${gaps.map((g) => g / MIN).join(', ')} min`);

// The schedule: after the k-th failure the next attempt comes after RETRY_DELAYS_MS[k-1] (15 min from the 5th on),
// at most one tick later; a 429 defers without counting as a failure.
let checkedGaps = 0;
const events = sqlite
  .prepare(
    "select lead_id, kind, at from lead_events where kind in ('publish_failed', 'publish_deferred', 'published') order by lead_id, id",
  )
  .all();
const byLead = new Map();
for (const e of events) byLead.set(e.lead_id, [...(byLead.get(e.lead_id) ?? []), e]);
for (const [leadId, list] of byLead) {
  let failures = 0;
  for (let i = 0; i < list.length - 1; i += 1) {
    const [a, b] = [list[i], list[i + 1]];
    if (a.kind !== 'publish_failed') continue;
    failures += 1;
    if (b.kind === 'publish_deferred' || list.slice(0, i).some((e) => e.kind === 'publish_deferred')) continue;
    const want = RETRY_DELAYS_MS[Math.min(failures, RETRY_DELAYS_MS.length) - 1];
    // An attempt that came due during flood control waits with the whole batch (docs/requirements.md §4.3): not a schedule gap.
    if (a.at + want >= floodStart) continue;
    const got = b.at - a.at;
    checkedGaps += 1;
    if (got < want || got > want + TICK)
      problems.push(`lead #${leadId}: attempt ${failures + 1} came ${got / SEC} s after failure ${failures}, expected ${want / SEC} s`);
  }
}
const floods = sandbox.callsOf('sendMessage').filter((c) => c.status === 429).length;
const attempts = sandbox.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === String(LEADS_CHAT)).length;

await app.close();
await sandbox.stop();
rmSync(dir, { recursive: true, force: true });

console.log(`outage drill: ${LEADS} leads; 2 h of 5xx, 1 h of hangs, 30 min of 429 (simulated), then 20 min of service
  card sends tried ${attempts}, answered 429 ${floods}
  cards delivered ${cards.size} of ${ids.length}, leads with more than one card ${doubled.length}
  publish alerts ${alertTimes.length} over ${((outageEnd - phase1Start) / MIN).toFixed(0)} min, smallest gap ${gaps.length ? (Math.min(...gaps) / MIN).toFixed(0) : '—'} min
  retry gaps checked against the schedule ${checkedGaps}, off schedule ${problems.filter((p) => p.includes('attempt')).length}`);
if (problems.length) {
  for (const p of problems.slice(0, 10)) console.log(`  ! ${p}`);
  console.log('FAILED');
  process.exit(1);
}
console.log('OK');
