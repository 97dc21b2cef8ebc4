#!/usr/bin/env node
// `npm run drill:cluster`: several server instances on one PostgreSQL, in webhook mode behind a tiny
// round-robin proxy that stands for the load balancer. Under a steady load of leads posted to every instance (a
// request that fails is retried with the same request_id on the next instance, as a landing behind a load balancer
// would; some request_ids are sent to two instances at once), one instance at a time is SIGKILLed and restarted.
// Meanwhile card buttons are pressed and a command is sent in the sandbox, and one card send gets a 429 with
// retry_after (the outbox holder is killed during that pause). Then the load stops, the outbox drains, and:
//  - every acknowledged lead is in PostgreSQL, and no request_id got two lead numbers;
//  - every lead has exactly one card (at most one extra per kill);
//  - every press and command was delivered by the webhook and answered (the press changed the lead's status and its
//    card shows it);
//  - no instance made a Bot API send (sendMessage, editMessageText) during the 429's pause, but in its first
//    FLOOD_REACH_MS: the instance that got the 429 shares the pause through the database, and the others read it
//    before each call, so a call already on its way (or decided before the pause was written) may still land there;
//  - no two instances polled at once (the sandbox counts getUpdates ended by another one), none at all with a webhook.
// Prints the counts, one line each; exits 1 when a rule is broken. Knobs: DRILL_INSTANCES (2; 2–3), DRILL_KILLS (6),
// DRILL_SECONDS (60: how long the load and the kills go on), DRILL_RETRY_AFTER (3: the 429's retry_after, seconds),
// DRILL_MODE (webhook; polling: no webhook, one instance polls, chosen through the database, and the poller is the
// one killed right after a press).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, run, waitForHttp } from '../e2e/stack.mjs';
import { startPostgres } from '../scripts/lib/throwaway-postgres.cjs';
import { EXIT_WITH_PARENT, checkAcknowledged, cleanupList, storedRequests } from './lib/common.mjs';

const require = createRequire(import.meta.url);
const { startSandbox } = require('../sandbox/dist/index.js');

function knob(name, fallback, min, max) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    console.error(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
    process.exit(2);
  }
  return Number(raw);
}
const INSTANCES = knob('DRILL_INSTANCES', 2, 2, 3);
const KILLS = knob('DRILL_KILLS', 6, 1, 100);
const SECONDS = knob('DRILL_SECONDS', 60, 10, 3600);
const RETRY_AFTER = knob('DRILL_RETRY_AFTER', 3, 1, 30);
/** How long another instance may take to see a pause: the upsert that shares it, and one Bot API call already leaving. */
const FLOOD_REACH_MS = 100;
const PRESS_EVERY_MS = 3000;
const MODE = process.env.DRILL_MODE || 'webhook';
if (!['webhook', 'polling'].includes(MODE)) {
  console.error(`DRILL_MODE must be webhook or polling (got "${MODE}")`);
  process.exit(2);
}
const WEBHOOK = MODE === 'webhook';

const SECRET = 'drill-secret-0123456789abcdef';
const WEBHOOK_SECRET = 'drill-webhook-secret-0123456789';
const LEADS_CHAT = -1001000000001;
const ADMIN_CHAT = -1001000000002;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
const progress = (line) => process.stderr.write(`[drill ${elapsed()}] ${line}\n`);
// Everything started is stopped, last started first, whether the drill passes, fails, throws or is interrupted.
const { add: addCleanup, cleanup } = cleanupList(progress);

// Each instance's output, one entry per start; written to files only when the drill fails (nothing is left behind
// otherwise, not even when the drill itself is killed).
const serverLogs = new Map();
function saveLogs() {
  const dir = mkdtempSync(join(tmpdir(), 'leads-cluster-drill-'));
  for (const [name, runs] of serverLogs) writeFileSync(join(dir, `${name}.log`), runs.join(''));
  return dir;
}

try {
  process.exitCode = await drill();
} catch (err) {
  console.error(`cluster drill broke off: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
  await cleanup();
  console.error(`server logs kept in ${saveLogs()}`);
}
await cleanup();

async function drill() {
  progress('starting PostgreSQL');
  const postgres = await startPostgres({ maxConnections: 100 });
  addCleanup(() => postgres.stop());
  const databaseUrl = await postgres.createDatabase('leads_cluster_drill');
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  db.on('error', () => undefined);
  addCleanup(() => db.end());

  const sandbox = await startSandbox();
  addCleanup(() => sandbox.stop());
  async function control(path, body) {
    const res = await fetch(`${sandbox.url}/sandbox/api/${path}`, {
      method: body ? 'POST' : 'GET',
      headers: { 'Content-Type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!res.ok) throw new Error(`sandbox ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  }

  const instances = [];
  for (let i = 0; i < INSTANCES; i += 1) {
    const port = await freePort();
    instances.push({ name: `server-${i + 1}`, port, url: `http://127.0.0.1:${port}`, child: null, up: false, starts: 0, kills: 0 });
  }
  const unexpectedExits = [];
  const proxy = WEBHOOK ? await startProxy(instances) : null;
  if (proxy) addCleanup(() => proxy.close());

  function serverEnv(instance) {
    return {
      PORT: String(instance.port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_MAX: '5',
      LEADS_SECRET: SECRET,
      LEADS_IP_SALT: 'drill-salt',
      LEADS_IP_LIMIT: '1000000000',
      LEADS_HOURLY_LIMIT: '1000000000',
      // One caller sends every request here: the per-caller throttles must not be what is measured.
      LEADS_THROTTLE_SUBMIT: '1000000000',
      LEADS_THROTTLE_API: '1000000000',
      LEADS_THROTTLE_EXPORT: '1000000000',
      TELEGRAM_BOT_TOKEN: sandbox.token,
      TELEGRAM_API_ROOT: sandbox.url,
      ...(WEBHOOK ? { TELEGRAM_WEBHOOK_URL: `${proxy.url}/telegram/webhook`, TELEGRAM_WEBHOOK_SECRET: WEBHOOK_SECRET } : {}),
      LEADS_CHAT_ID: String(LEADS_CHAT),
      ADMIN_CHAT_ID: String(ADMIN_CHAT),
      PUBLISH_INTERVAL_SEC: '1',
      LOG_LEVEL: 'warn',
    };
  }
  async function startInstance(instance) {
    instance.starts += 1;
    const child = run(instance.name, ['--import', EXIT_WITH_PARENT, 'server/dist/main.js'], serverEnv(instance));
    instance.child = child;
    child.expectedExit = false;
    child.once('exit', (code, signal) => {
      instance.up = false;
      if (!serverLogs.has(instance.name)) serverLogs.set(instance.name, []);
      serverLogs.get(instance.name).push(`--- start ${instance.starts} (pid ${child.pid}): exit ${code ?? signal}\n${child.output}`);
      if (!child.expectedExit) {
        unexpectedExits.push(`${instance.name} (pid ${child.pid}) exited by itself: ${code ?? signal}`);
        progress(`${instance.name} exited by itself (${code ?? signal})`);
      }
    });
    await waitForHttp(`${instance.url}/health`, child, instance.name, 30000);
    instance.up = true;
  }
  async function stopInstance(instance, signal) {
    const child = instance.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.expectedExit = true;
    instance.up = false;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    // A graceful stop that hangs must not hold the drill: it gets 15 s, then SIGKILL.
    const overdue = setTimeout(() => {
      progress(`${instance.name} did not stop within 15 s of ${signal}: SIGKILL`);
      child.kill('SIGKILL');
    }, 15000);
    await exited;
    clearTimeout(overdue);
  }
  addCleanup(() => Promise.all(instances.map((instance) => stopInstance(instance, 'SIGKILL'))));

  progress(`starting ${INSTANCES} instances (the first one migrates the database)`);
  await startInstance(instances[0]);
  await Promise.all(instances.slice(1).map(startInstance));

  // --- The load: leads through every instance, round-robin; a failure is retried on the next instance. ---
  const answers = new Map(); // request_id -> Set of lead numbers answered
  let sent = 0;
  let pairs = 0;
  let retries = 0;
  let abandoned = 0;
  let loadStopping = false;
  let seq = 0;
  let roundRobin = 0;
  function body() {
    seq += 1;
    // Every 7th is a repeat of an earlier contact, so repeat decisions race the kills too.
    const contact = seq % 7 === 0 ? seq - 1 : seq;
    return {
      request_id: crypto.randomUUID(),
      name: 'Кластер Драйл',
      telegram: `@cluster_user_${contact}`,
      phone: `+7912${String(contact).padStart(7, '0')}`,
      client_ip: `10.2.${(seq >> 8) & 255}.${seq & 255}`,
    };
  }
  async function submit(lead, first) {
    for (let attempt = 0; ; attempt += 1) {
      const instance = instances[(first + attempt) % INSTANCES];
      try {
        const res = await fetch(`${instance.url}/leads`, {
          method: 'POST',
          headers: { 'X-Stickers-Leads-Secret': SECRET, 'Content-Type': 'application/json' },
          body: JSON.stringify(lead),
          signal: AbortSignal.timeout(5000),
        });
        if (res.status !== 201 && res.status !== 200) throw new Error(`status ${res.status}`);
        const { lead_number } = await res.json();
        if (!answers.has(lead.request_id)) answers.set(lead.request_id, new Set());
        answers.get(lead.request_id).add(lead_number);
        return;
      } catch {
        retries += 1;
        // The load is over and every instance is up: a request still failing after this long is given up (it was
        // never acknowledged, so it cannot count as lost), rather than holding the drill forever.
        if (loadStopping && attempt > 200) {
          abandoned += 1;
          return;
        }
        await sleep(50);
      }
    }
  }
  async function client() {
    while (!loadStopping) {
      const lead = body();
      sent += 1;
      const first = roundRobin++;
      if (seq % 10 === 0) {
        // The same request_id to two instances at once (a double submit, a retry racing the original).
        pairs += 1;
        await Promise.all([submit(lead, first), submit(lead, first + 1)]);
      } else {
        await submit(lead, first);
      }
      await sleep(100); // a steady load, not a flood: the outbox publishes 10 cards per pass (docs/requirements.md §4.1)
    }
  }

  // --- Presses and commands through the sandbox's control API; the updates reach the instances by webhook (or polling). ---
  const presses = []; // { lead, callbackId, updateId, why }
  const commands = []; // { messageId, updateId, why }
  const answered = (press) => sandbox.state.callbackAnswers.some((a) => a.callback_query_id === press.callbackId);
  const replied = (command) => sandbox.messages(ADMIN_CHAT).some((m) => m.from.is_bot && m.reply_to_message_id === command.messageId);
  let updates = Promise.resolve();
  /** One update at a time, so the update's id is the sandbox's last one when the control call returns. */
  function pushUpdate(fn) {
    const result = updates.then(fn);
    updates = result.catch(() => undefined);
    return result;
  }
  async function pressACard(why) {
    const { rows } = await db.query(
      `select id, message_id from leads where status = 'new' and chat_id = $1 and message_id is not null order by id desc limit 50`,
      [String(LEADS_CHAT)],
    );
    const cards = sandbox.messages(LEADS_CHAT);
    for (const row of rows) {
      const lead = Number(row.id);
      const data = `lead:${lead}:new:in_progress`;
      if (presses.some((p) => p.lead === lead)) continue;
      const card = cards.find((m) => m.message_id === Number(row.message_id));
      if (!card?.reply_markup?.inline_keyboard.flat().some((b) => b.callback_data === data)) continue;
      return pushUpdate(async () => {
        const { callback_query_id } = await control('press', { chat_id: LEADS_CHAT, message_id: card.message_id, data });
        presses.push({ lead, callbackId: callback_query_id, updateId: sandbox.state.nextUpdateId - 1, at: Date.now(), why });
        progress(`pressed "В работу" on lead #${lead} (${why})`);
      });
    }
    progress(`no card to press yet (${why})`);
  }
  function sendCommand(why) {
    return pushUpdate(async () => {
      const { message_id } = await control('say', { chat_id: ADMIN_CHAT, text: '/stickers_stats' });
      commands.push({ messageId: message_id, updateId: sandbox.state.nextUpdateId - 1, at: Date.now(), why });
      progress(`sent /stickers_stats in the admin chat (${why})`);
    });
  }

  // --- The 429: one card send gets it; the outbox holder is killed during the pause, a card pressed in it. ---
  const flood = { at: null, end: null, holderKilled: null };
  /** Command replies are no outbox call (§4.3 pauses the outbox's calls): none is sent while the pause may be on. */
  let floodPending = false;
  async function outsideFlood() {
    while (floodPending || (flood.end !== null && Date.now() < flood.end + 500)) await sleep(100);
  }
  /** The live instance that holds lease `name` (`outbox`, `telegram-polling`), or null. */
  async function leaseHolder(name) {
    const { rows } = await db.query(`select holder from leases where name = $1`, [name]);
    const pid = Number(rows[0]?.holder.split(':')[1]);
    return instances.find((i) => i.up && i.child.pid === pid) ?? null;
  }
  async function floodAndKill() {
    floodPending = true;
    // A command's reply still on its way would land in the pause: it goes out first (while polling, after a failover).
    await updates;
    for (let i = 0; i < 300 && !commands.every(replied); i += 1) await sleep(100);
    const before = sandbox.state.calls.length;
    await control('faults', { method: 'sendMessage', kind: 'retry_after', retry_after: RETRY_AFTER, chat_id: LEADS_CHAT, count: 1 });
    progress(`429 (retry_after ${RETRY_AFTER} s) armed for the next card send`);
    const deadline = Date.now() + 20000;
    let call;
    while (!(call = sandbox.state.calls.slice(before).find((c) => c.status === 429)) && Date.now() < deadline) await sleep(20);
    if (!call) {
      floodPending = false;
      throw new Error('no card was sent within 20 s of arming the 429: the outbox is stuck');
    }
    flood.at = call.at;
    flood.end = call.at + RETRY_AFTER * 1000;
    floodPending = false;
    await sleep(Math.max(0, call.at + 700 - Date.now()));
    const holder = (await leaseHolder('outbox')) ?? instances.find((i) => i.up);
    flood.holderKilled = holder.name;
    progress(`429 answered at ${new Date(call.at).toISOString()}; killing the outbox holder ${holder.name} in the pause`);
    await stopInstance(holder, 'SIGKILL');
    holder.kills += 1;
    await sleep(Math.max(0, call.at + 1200 - Date.now()));
    await pressACard('during the flood pause, its holder dead');
    return holder;
  }

  // --- The run: load, kills at random moments (one at a time, so one instance is always up), presses, commands. ---
  progress(`load on; ${KILLS} SIGKILLs over ${SECONDS} s`);
  const loadStarted = Date.now();
  const clients = Array.from({ length: 4 }, client);
  const span = SECONDS * 1000;
  const at = (ms) => sleep(Math.max(0, loadStarted + ms - Date.now()));
  const pressing = (async () => {
    for (let t = 0.08 * span; t < 0.92 * span; t += PRESS_EVERY_MS) {
      await at(t);
      await outsideFlood();
      await pressACard(`+${Math.round(t / 1000)} s into the load`);
    }
  })();
  const commanding = (async () => {
    for (const share of [0.2, 0.82]) {
      await at(share * span);
      await outsideFlood();
      await sendCommand(`+${Math.round((share * span) / 1000)} s into the load`);
    }
  })();
  const floodKill = Math.floor(KILLS / 2);
  let midUpdateKills = 0;
  for (let k = 0; k < KILLS; k += 1) {
    // Evenly spread over the run, each at a random moment of its slot.
    const slot = span / KILLS;
    await at(slot * k + slot * (0.3 + Math.random() * 0.5));
    let victim;
    if (k === floodKill) {
      victim = await floodAndKill();
    } else {
      const live = instances.filter((i) => i.up);
      victim = live[Math.floor(Math.random() * live.length)];
      if (k % 2 === 1 && !WEBHOOK) {
        // The poller is killed right after a press: the update is in its hands or on its way to them.
        victim = (await leaseHolder('telegram-polling')) ?? victim;
        await pressACard(`just before the poller ${victim.name} is killed`);
        midUpdateKills += 1;
        await sleep(Math.random() * 30);
      } else if (k % 2 === 1) {
        // Killed while it handles an update: the proxy sends the next one (a press) to it, and it dies a few ms in.
        const reached = proxy.aim(victim);
        await pressACard(`just before ${victim.name} is killed`);
        if (await Promise.race([reached, sleep(3000).then(() => false)])) {
          midUpdateKills += 1;
          await sleep(Math.random() * 15);
        }
        proxy.aim(null);
      }
      await stopInstance(victim, 'SIGKILL');
      victim.kills += 1;
    }
    await sleep(300 + Math.random() * 1200);
    await startInstance(victim);
    progress(`kill ${k + 1}/${KILLS} (${victim.name}) done; acknowledged so far ${answers.size}`);
  }
  await at(span);
  await Promise.all([pressing, commanding]);
  loadStopping = true;
  await Promise.all(clients);
  progress('load stopped; waiting for the outbox to drain and every update to be delivered');

  // --- Drain: every lead published, every update delivered, every press and command answered (bounded). ---
  const count = async (where) => Number((await db.query(`select count(*) as n from leads where ${where}`)).rows[0].n);
  const unpublished = () => count('published_at is null or message_id is null');
  const toRewrite = () => count('card_dirty_at is not null');
  const drainDeadline = Date.now() + 90_000;
  while (Date.now() < drainDeadline) {
    const done =
      (await unpublished()) === 0 &&
      (await toRewrite()) === 0 &&
      sandbox.state.updates.length === 0 &&
      presses.every(answered) &&
      commands.every(replied);
    if (done) break;
    await sleep(200);
  }
  const left = await unpublished();
  const dirty = await toRewrite();
  progress(`drained (${left} unpublished, ${dirty} cards to rewrite left); stopping the instances`);
  await Promise.all(instances.map((instance) => stopInstance(instance, 'SIGTERM')));

  // --- Verification, by SQL on PostgreSQL and from the sandbox's records. ---
  const leads = (await db.query('select id, request_id, status, message_id from leads')).rows.map((r) => ({
    ...r,
    id: Number(r.id),
    message_id: Number(r.message_id),
  }));
  const stored = await storedRequests(db);
  const checked = checkAcknowledged(answers, stored.byRequest);
  const violations = [...checked.violations];
  const lost = checked.lost.length;
  const twoNumbers = checked.twoNumbers.length;

  const cardsPerLead = new Map();
  for (const m of sandbox.messages(LEADS_CHAT)) {
    const n = /^🆕 Заявка #(\d+)\n/.exec(m.text);
    if (n) cardsPerLead.set(Number(n[1]), (cardsPerLead.get(Number(n[1])) ?? 0) + 1);
  }
  const withoutCard = leads.filter((l) => !cardsPerLead.has(l.id));
  const extraCards = [...cardsPerLead.values()].reduce((sum, c) => sum + (c - 1), 0);
  const totalKills = instances.reduce((sum, i) => sum + i.kills, 0);
  for (const l of withoutCard.slice(0, 5)) violations.push(`lead #${l.id} has no card`);

  // Taken by the bot: the webhook answered 2xx to its delivery, or (polling) a later getUpdates confirmed it by its offset.
  const deliveries = sandbox.webhookDeliveries;
  const polls = sandbox.polls;
  const delivered = WEBHOOK
    ? (updateId) => deliveries.some((d) => d.update_id === updateId && d.status >= 200 && d.status < 300)
    : (updateId) => polls.some((p) => p.offset > updateId);
  const leadById = new Map(leads.map((l) => [l.id, l]));
  const changed = (p) => leadById.get(p.lead)?.status === 'in_progress';
  const shown = (p) =>
    sandbox
      .messages(LEADS_CHAT)
      .find((m) => m.message_id === leadById.get(p.lead)?.message_id)
      ?.text.includes('Статус: 🛠 В работе') === true;
  const pressesAnswered = presses.filter(answered).length;
  const pressesChanged = presses.filter(changed).length;
  const pressesShown = presses.filter(shown).length;
  const pressesDelivered = presses.filter((p) => delivered(p.updateId)).length;
  for (const p of presses) {
    if (!answered(p) || !changed(p) || !shown(p) || !delivered(p.updateId))
      violations.push(
        `press on lead #${p.lead} (${p.why}): answered ${answered(p)}, status ${leadById.get(p.lead)?.status}, ` +
          `card shows it ${shown(p)}, delivered ${delivered(p.updateId)}`,
      );
  }
  const commandsReplied = commands.filter(replied).length;
  const commandsDelivered = commands.filter((c) => delivered(c.updateId)).length;
  for (const c of commands) {
    if (!replied(c) || !delivered(c.updateId))
      violations.push(`command (${c.why}): replied ${replied(c)}, delivered ${delivered(c.updateId)}`);
  }

  // The pause: no send from any instance in [the 429, + retry_after), the 429 itself aside.
  const calls = await control('calls');
  const floodIndex = calls.findIndex((c) => c.status === 429);
  const sends = (c) => c.method === 'sendMessage' || c.method === 'editMessageText';
  const inFlood = flood.at === null ? [] : calls.filter((c, i) => i > floodIndex && sends(c) && c.at >= flood.at && c.at < flood.end);
  const inReach = inFlood.filter((c) => c.at < flood.at + FLOOD_REACH_MS);
  const inPause = inFlood.filter((c) => c.at >= flood.at + FLOOD_REACH_MS);
  const firstAfter = calls.find((c, i) => i > floodIndex && sends(c) && c.at >= flood.end);
  for (const c of inPause.slice(0, 5))
    violations.push(`${c.method} to ${c.params.chat_id} at +${c.at - flood.at} ms into the ${RETRY_AFTER} s pause`);
  const updatesLine = WEBHOOK
    ? `webhook deliveries ${deliveries.length} (failed and retried ${deliveries.filter((d) => d.error !== undefined).length}); ` +
      `proxy forwarded ${proxy.stats.forwarded}, refused connections ${proxy.stats.refused}, dropped mid-update ` +
      `${proxy.stats.dropped} (${midUpdateKills} kills aimed at an update in flight)`
    : `pollers killed right after a press ${midUpdateKills}`;
  await sandbox.stop();

  const broken =
    lost > 0 ||
    twoNumbers > 0 ||
    withoutCard.length > 0 ||
    left > 0 ||
    extraCards > totalKills ||
    presses.length === 0 ||
    [pressesAnswered, pressesChanged, pressesShown, pressesDelivered].some((n) => n < presses.length) ||
    commands.length === 0 ||
    [commandsReplied, commandsDelivered].some((n) => n < commands.length) ||
    flood.at === null ||
    inPause.length > 0 ||
    sandbox.pollConflicts > 0 ||
    (WEBHOOK && polls.length > 0) ||
    unexpectedExits.length > 0;
  const how = WEBHOOK ? 'webhook mode behind a round-robin proxy' : 'polling mode (one poller, chosen by a lease)';
  const by = WEBHOOK ? 'by webhook' : 'by polling';
  console.log(`cluster drill: ${INSTANCES} instances on one PostgreSQL, ${how}, ${totalKills} SIGKILLs under load
  requests sent ${sent} (${pairs} to two instances at once), retried after a failure ${retries}, given up ${abandoned}
  acknowledged ${answers.size}, lost ${lost}
  request_ids with two lead numbers ${twoNumbers}
  stored leads ${leads.length}, repeats ${stored.repeats}, unpublished at the end ${left}, cards still to rewrite ${dirty}
  leads without a card ${withoutCard.length}, extra cards ${extraCards} (allowed: at most ${totalKills}, one per kill)
  presses ${presses.length}: answered ${pressesAnswered}, status changed ${pressesChanged}, card shows it ${pressesShown}, delivered ${by} ${pressesDelivered}
  commands ${commands.length}: answered ${commandsReplied}, delivered ${by} ${commandsDelivered}
  429 (retry_after ${RETRY_AFTER} s, outbox holder ${flood.holderKilled ?? '-'} killed in it): sends in the pause ${inPause.length} (and ${inReach.length} in its first ${FLOOD_REACH_MS} ms, allowed), first send after it +${firstAfter && flood.at ? firstAfter.at - flood.at : '-'} ms
  ${updatesLine}
  getUpdates polls ${polls.length}${WEBHOOK ? ' (allowed: 0, webhook mode)' : ''}, ended by another instance's poll (409) ${sandbox.pollConflicts} (allowed: 0)
  instances exited by themselves ${unexpectedExits.length}; starts ${instances.map((i) => `${i.name} ${i.starts}`).join(', ')}; took ${elapsed()}`);
  if (broken) {
    for (const v of [...unexpectedExits, ...violations].slice(0, 20)) console.log(`  ! ${v}`);
    console.log(`FAILED (server logs kept in ${saveLogs()})`);
    return 1;
  }
  console.log('OK');
  return 0;
}

/**
 * The load balancer in front of the instances' webhook route: each POST goes to the next instance, round-robin; an
 * instance that refuses the connection (down) is skipped for the next one. One that drops the request midway (killed
 * while handling it) gets the update answered 502, so the sandbox delivers it again, as Telegram would.
 */
async function startProxy(instances) {
  const stats = { forwarded: 0, refused: 0, dropped: 0 };
  let next = 0;
  /** The instance the next update goes to first, and what to tell once it has been sent there. */
  let aimed = null;
  const forward = (instance, req, body, onSent) =>
    new Promise((resolve) => {
      const headers = { 'Content-Type': req.headers['content-type'] ?? 'application/json', 'Content-Length': body.length };
      const secret = req.headers['x-telegram-bot-api-secret-token'];
      if (secret !== undefined) headers['X-Telegram-Bot-Api-Secret-Token'] = secret;
      const out = httpRequest({ host: '127.0.0.1', port: instance.port, path: req.url, method: req.method, headers, agent: false });
      out.setTimeout(9000, () => out.destroy(new Error('timeout')));
      out.on('response', (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('error', () => resolve('dropped'));
        res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body: Buffer.concat(chunks) }));
      });
      out.on('error', (err) => resolve(err.code === 'ECONNREFUSED' ? 'refused' : 'dropped'));
      out.end(body, () => onSent?.(true));
    });
  const server = createServer((req, res) => {
    void (async () => {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const body = Buffer.concat(chunks);
      for (let tried = 0; tried < instances.length; tried += 1) {
        const target = tried === 0 ? aimed : null;
        aimed = target ? null : aimed;
        const instance = target?.instance ?? instances[next++ % instances.length];
        const answer = await forward(instance, req, body, target?.resolve);
        if (answer === 'refused') {
          stats.refused += 1;
          continue;
        }
        if (answer === 'dropped') {
          stats.dropped += 1;
          break;
        }
        stats.forwarded += 1;
        res.writeHead(answer.status, answer.type ? { 'Content-Type': answer.type } : {});
        res.end(answer.body);
        return;
      }
      res.writeHead(502).end();
    })().catch(() => res.destroy());
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    stats,
    /** Sends the next update to `instance` first; resolves (true) once it is on its way there. `null` cancels. */
    aim(instance) {
      aimed?.resolve(false);
      aimed = null;
      return instance ? new Promise((resolve) => (aimed = { instance, resolve })) : Promise.resolve(false);
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}
