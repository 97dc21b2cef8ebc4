#!/usr/bin/env node
// `npm run drill:crash`: under a steady load, SIGKILL the server at random moments 10 times, restarting it each
// time. Clients retry a request with the same request_id until it is acknowledged, as the landing does. Then:
// every acknowledged lead is in the database, every stored lead has exactly one card (at most one extra per kill),
// and no request_id got two lead numbers. Meanwhile a visitor bound to a lead ("Continue in Telegram") writes to the bot
// and a member replies to the card: every message is stored once and reaches the other side (at most one extra copy
// per kill, as for cards). Prints the counts; exits 1 when a lead or a message is lost or a rule is broken.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { freePort, run, waitForHttp } from '../e2e/stack.mjs';

const require = createRequire(import.meta.url);
const { startSandbox, DEFAULT_USER } = require('../sandbox/dist/index.js');
const KILLS = Number(process.env.DRILL_KILLS ?? 10);
const SECRET = 'drill-secret-0123456789abcdef';
const LEADS_CHAT = -1001000000001;
const dir = mkdtempSync(join(tmpdir(), 'leads-crash-'));
const dbPath = join(dir, 'leads.sqlite');
const port = await freePort();
const url = `http://127.0.0.1:${port}/leads`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const progress = (line) => process.stderr.write(`[drill] ${line}\n`);

const sandbox = await startSandbox();
const VISITOR = { id: 7001, is_bot: false, first_name: 'Анна', username: 'drill_visitor' };
sandbox.state.addChat({ id: VISITOR.id, type: 'private', title: 'Анна' });
let server = null;
async function startServer() {
  server = run('server', ['server/dist/main.js'], {
    PORT: String(port),
    DATABASE_PATH: dbPath,
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
    LEADS_CHAT_ID: String(LEADS_CHAT),
    PUBLISH_INTERVAL_SEC: '1',
    LOG_LEVEL: 'warn',
  });
  await waitForHttp(url.replace('/leads', '/health'), server, 'server', 15000);
}

const acks = new Map(); // request_id -> lead_number
const violations = [];
let sent = 0;
let retries = 0;
let stopping = false;
let seq = 0;
function body() {
  seq += 1;
  // Every 7th is a repeat of an earlier contact, to crash through repeat decisions too.
  const contact = seq % 7 === 0 ? seq - 1 : seq;
  return {
    request_id: crypto.randomUUID(),
    name: 'Краш Драйл',
    telegram: `@crash_user_${contact}`,
    phone: `+7911${String(contact).padStart(7, '0')}`,
    client_ip: `10.1.${(seq >> 8) & 255}.${seq & 255}`,
  };
}
async function client() {
  while (!stopping) {
    const lead = body();
    sent += 1;
    for (;;) {
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'X-Stickers-Leads-Secret': SECRET },
          body: JSON.stringify(lead),
          signal: AbortSignal.timeout(5000),
        });
        if (res.status !== 201 && res.status !== 200) throw new Error(`status ${res.status}`);
        const { lead_number } = await res.json();
        const before = acks.get(lead.request_id);
        if (before !== undefined && before !== lead_number)
          violations.push(`request_id ${lead.request_id} got lead numbers ${before} and ${lead_number}`);
        acks.set(lead.request_id, lead_number);
        await sleep(100); // a steady load, not a flood: the outbox publishes 10 cards per pass (docs/requirements.md §4.1)
        break;
      } catch {
        retries += 1; // the server is down or was killed mid-request: retry the same request, as the landing does
        await sleep(50);
      }
    }
  }
}

/** The visitor: one lead, its link opened in the bot, then a message a second to the bot, each with its own text. */
async function bindVisitor() {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'X-Stickers-Leads-Secret': SECRET },
    body: JSON.stringify({ ...body(), telegram: '@drill_visitor' }),
  });
  const { telegram_link, lead_number } = await res.json();
  for (let i = 0; i < 100 && !cardOf(lead_number); i += 1) await sleep(100);
  card = cardOf(lead_number)?.message_id;
  if (!card) throw new Error("the visitor's lead got no card");
  const start = sandbox.say(VISITOR.id, `/start ${new URL(telegram_link).searchParams.get('start')}`, VISITOR);
  for (let i = 0; i < 100 && !sandbox.messages(VISITOR.id).some((m) => m.reply_to_message_id === start); i += 1) await sleep(100);
  if (!sandbox.messages(VISITOR.id).some((m) => m.reply_to_message_id === start)) throw new Error('the bot did not answer /start');
}
let card;
const cardOf = (n) => sandbox.messages(LEADS_CHAT).find((m) => m.text.startsWith(`🆕 Заявка #${n}\n`));
const said = [];
const answered = [];
/** The visitor writes to the bot and a member replies to the card, in turn, each message with its own text. */
async function chatter() {
  while (!stopping) {
    const text = `drill message ${said.length + 1}`;
    said.push(text);
    sandbox.say(VISITOR.id, text, VISITOR);
    await sleep(500);
    const answer = `drill answer ${answered.length + 1}`;
    answered.push(answer);
    sandbox.say(LEADS_CHAT, answer, DEFAULT_USER, undefined, { reply_to_message_id: card });
    await sleep(500); // a message a second each way: the pace a chat takes them at (the outbox paces them)
  }
}

await startServer();
await bindVisitor();
const chatting = chatter();
const clients = Array.from({ length: 4 }, client);
for (let k = 0; k < KILLS; k += 1) {
  await sleep(300 + Math.random() * 1200);
  server.kill('SIGKILL');
  await new Promise((r) => server.once('exit', r));
  await sleep(Math.random() * 200);
  await startServer();
  progress(`kill ${k + 1}/${KILLS} done; acknowledged so far ${acks.size}`);
}
await sleep(1000);
stopping = true;
await Promise.all([...clients, chatting]);
progress('load stopped; waiting for the outbox to drain');

// Let the outbox publish everything that is left.
const db = new Database(dbPath, { readonly: true });
const unpublished = () => db.prepare('select count(*) as n from leads where published_at is null').get().n;
const conversationWaiting = () =>
  db.prepare(`select count(*) as n from outbox where kind in ('visitor_message', 'team_message') and done_at is null`).get().n +
  db.prepare(`select count(*) as n from lead_messages`).get().n -
  said.length -
  answered.length;
// Every message stored (the bot may take the last ones after the load stopped) and every relay done.
for (let i = 0; i < 1200 && (unpublished() > 0 || conversationWaiting() !== 0); i += 1) await sleep(100);
const storedTexts = db
  .prepare(`select text from lead_messages`)
  .all()
  .map((m) => m.text);
const leads = db.prepare('select id, request_id from leads').all();
const repeats = db.prepare('select lead_id, request_id from lead_repeats').all();
const stored = new Map([...leads.map((l) => [l.request_id, l.id]), ...repeats.map((r) => [r.request_id, r.lead_id])]);
const left = unpublished();
db.close();
progress(`drained (${left} left); stopping the server`);
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));

let lost = 0;
for (const [requestId, number] of acks) {
  if (!stored.has(requestId)) lost += 1;
  else if (stored.get(requestId) !== number)
    violations.push(`request_id ${requestId} acknowledged as #${number} but stored as #${stored.get(requestId)}`);
}
const cardsPerLead = new Map();
for (const m of sandbox.messages(LEADS_CHAT)) {
  const n = /^🆕 Заявка #(\d+)\n/.exec(m.text);
  if (n) cardsPerLead.set(Number(n[1]), (cardsPerLead.get(Number(n[1])) ?? 0) + 1);
}
const withoutCard = leads.filter((l) => !cardsPerLead.has(l.id)).length;
const relays = new Map();
for (const m of sandbox.messages(LEADS_CHAT)) {
  const t = /\n(drill message \d+)$/.exec(m.text);
  if (t) relays.set(t[1], (relays.get(t[1]) ?? 0) + 1);
}
const copies = new Map();
for (const m of sandbox.messages(VISITOR.id))
  if (m.from.is_bot && /^drill answer \d+$/.test(m.text)) copies.set(m.text, (copies.get(m.text) ?? 0) + 1);
const messagesLost = said.filter((t) => !storedTexts.includes(t) || !relays.has(t)).length;
const answersLost = answered.filter((t) => !storedTexts.includes(t) || !copies.has(t)).length;
const storedTwice = storedTexts.length - new Set(storedTexts).size;
const extraRelays = [...relays.values(), ...copies.values()].reduce((sum, c) => sum + (c - 1), 0);
const extraCards = [...cardsPerLead.values()].reduce((sum, c) => sum + (c - 1), 0);
await sandbox.stop();
rmSync(dir, { recursive: true, force: true });

console.log(`crash drill: ${KILLS} SIGKILLs under load
  requests sent ${sent}, retried after a failure ${retries}
  acknowledged ${acks.size}, lost ${lost}
  stored leads ${leads.length}, repeats ${repeats.length}, unpublished at the end ${left}
  leads without a card ${withoutCard}, extra cards ${extraCards} (allowed: at most ${KILLS}, one per kill)
  request_ids with two lead numbers ${violations.length}
  visitor messages ${said.length}, lost ${messagesLost}; team replies ${answered.length}, lost ${answersLost}
  messages stored twice ${storedTwice}, sent twice ${extraRelays} (allowed: at most ${KILLS}, one per kill)`);
if (
  lost > 0 ||
  withoutCard > 0 ||
  left > 0 ||
  extraCards > KILLS ||
  violations.length > 0 ||
  messagesLost > 0 ||
  answersLost > 0 ||
  storedTwice > 0 ||
  extraRelays > KILLS
) {
  for (const v of violations.slice(0, 10)) console.log(`  ! ${v}`);
  console.log('FAILED');
  process.exit(1);
}
console.log('OK');
