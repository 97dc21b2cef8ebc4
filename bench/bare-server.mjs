// The baseline for `npm run bench`: node:http + better-sqlite3 doing the same work as POST /leads — secret
// (constant time), size limit, JSON object, the shared field rules, HMAC of the visitor ip, and one BEGIN IMMEDIATE
// transaction deciding duplicate / visitor and hourly limits / repeat / new lead. No framework, no logging.
// BARE_SYNCHRONOUS=FULL (default: as durable as ours, an fsync per commit) or NORMAL (WAL without the fsync per commit:
// a power cut may lose the last acknowledged leads — the naive server the bench compares against).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import Database from 'better-sqlite3';

const require = createRequire(import.meta.url);
const { validateSubmission, canonicalIp, MAX_BODY_BYTES, REPEAT_WINDOW_MS } = require('../shared/dist/cjs/index.js');

const {
  PORT = '0',
  DATABASE_PATH,
  LEADS_SECRET,
  LEADS_IP_SALT,
  LEADS_IP_LIMIT = '5',
  LEADS_HOURLY_LIMIT = '60',
  BARE_SYNCHRONOUS = 'FULL',
} = process.env;
if (!['FULL', 'NORMAL'].includes(BARE_SYNCHRONOUS)) throw new Error(`BARE_SYNCHRONOUS must be FULL or NORMAL (got ${BARE_SYNCHRONOUS})`);
const db = new Database(DATABASE_PATH);
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${BARE_SYNCHRONOUS}`);
db.exec(`
  create table if not exists leads (id integer primary key autoincrement, request_id text not null unique, name text, telegram text,
    telegram_key text, phone text, date text, guests text, comment text, ip_hash text, status text not null default 'new', created_at integer not null);
  create index if not exists leads_tg on leads (telegram_key, created_at);
  create index if not exists leads_phone on leads (phone, created_at);
  create table if not exists lead_repeats (id integer primary key autoincrement, lead_id integer not null, request_id text not null unique,
    created_at integer not null, changes text not null);
  create table if not exists hits (id integer primary key autoincrement, ip_hash text not null, at integer not null);
  create index if not exists hits_ip on hits (ip_hash, at);
  create index if not exists hits_at on hits (at);
`);
const known = db.prepare(
  'select id as lead_id, 0 as rep from leads where request_id = ? union all select lead_id, 1 from lead_repeats where request_id = ? limit 1',
);
const visitorNth = db.prepare('select at from hits where ip_hash = ? and at > ? order by at desc limit 1 offset ?');
const hourlyNth = db.prepare('select at from hits where at > ? order by at desc limit 1 offset ?');
const hit = db.prepare('insert into hits (ip_hash, at) values (?, ?)');
const target = db.prepare(
  `select * from leads where (telegram_key = ? or phone = ?) and created_at > ? and status != 'spam' order by created_at desc limit 1`,
);
const insertLead = db.prepare(
  'insert into leads (request_id, name, telegram, telegram_key, phone, date, guests, comment, ip_hash, created_at) values (?,?,?,?,?,?,?,?,?,?)',
);
const insertRepeat = db.prepare('insert into lead_repeats (lead_id, request_id, created_at, changes) values (?,?,?,?)');
const ipLimit = Number(LEADS_IP_LIMIT);
const hourly = Number(LEADS_HOURLY_LIMIT);

const submit = db.transaction((lead, ipHash, now) => {
  const k = known.get(lead.request_id, lead.request_id);
  if (k) return [200, { lead_number: k.lead_id, duplicate: true, repeat: k.rep === 1 }];
  if (visitorNth.get(ipHash, now - 600_000, ipLimit - 1)) return [429, { error: 'rate_limited', why: 'visitor' }];
  if (hourlyNth.get(now - 3_600_000, hourly - 1)) return [429, { error: 'rate_limited', why: 'hourly' }];
  hit.run(ipHash, now);
  const t = target.get(lead.telegram.toLowerCase(), lead.phone, now - REPEAT_WINDOW_MS);
  if (t) {
    const changes = {};
    for (const f of ['name', 'telegram', 'phone', 'date', 'guests', 'comment'])
      if (lead[f] !== null && lead[f] !== t[f]) changes[f] = lead[f];
    insertRepeat.run(t.id, lead.request_id, now, JSON.stringify(changes));
    return [200, { lead_number: t.id, duplicate: true, repeat: true }];
  }
  const r = insertLead.run(
    lead.request_id,
    lead.name,
    lead.telegram,
    lead.telegram.toLowerCase(),
    lead.phone,
    lead.date,
    lead.guests,
    lead.comment,
    ipHash,
    now,
  );
  return [201, { lead_number: Number(r.lastInsertRowid), duplicate: false, repeat: false }];
});

const secretDigest = createHash('sha256').update(LEADS_SECRET).digest();
const reply = (res, status, body) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
};

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/leads') return reply(res, 404, { error: 'not_found' });
  const given = createHash('sha256')
    .update(String(req.headers['x-stickers-leads-secret'] ?? ''))
    .digest();
  if (!timingSafeEqual(given, secretDigest)) return reply(res, 401, { error: 'unauthorized' });
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return reply(res, 413, { error: 'payload_too_large' });
  const chunks = [];
  let size = 0;
  req.on('data', (c) => {
    size += c.length;
    chunks.push(c);
  });
  req.on('end', () => {
    if (size > MAX_BODY_BYTES) return reply(res, 413, { error: 'payload_too_large' });
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return reply(res, 422, { error: 'invalid_body' });
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) return reply(res, 422, { error: 'invalid_body' });
    const checked = validateSubmission(body);
    if (!checked.ok) return reply(res, 422, { error: 'invalid', errors: checked.errors });
    const ip = checked.value.client_ip ?? canonicalIp(req.socket.remoteAddress ?? '') ?? '';
    const ipHash = createHmac('sha256', LEADS_IP_SALT).update(ip).digest('hex');
    const [status, out] = submit.immediate(checked.value, ipHash, Date.now());
    reply(res, status, out);
  });
});
server.listen(Number(PORT), '127.0.0.1', () => console.log(`bare server on ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
