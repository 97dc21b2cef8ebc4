// The bench's leads, written straight into a database the built server migrated: a number of leads over the last DAYS days,
// published, with their status history. Shared by bench/inbox.mjs and bench/stall.mjs.
import Database from 'better-sqlite3';
import pg from 'pg';

export const DAYS = 60;
const SOURCES = ['wedding', 'corporate', 'birthday', 'school', null];
const STATUSES = ['new', 'in_progress', 'won', 'lost', 'spam'];
const NAMES = ['Анна Ким', 'Борис Ли', 'Мария Орлова', 'Глеб Смирнов', 'Ольга Пак', 'Иван Петров'];

const LEAD_COLUMNS = [
  'id',
  'request_id',
  'name',
  'telegram',
  'telegram_key',
  'phone',
  'ip_hash',
  'created_at',
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
 * `count` leads over the last DAYS days, oldest first, published; every fifth without a source; statuses spread, each
 * lead not `new` with one or two history rows (its first change 5 minutes to 2 days after its creation): the rows of
 * `leads` and of `lead_status_changes`, in LEAD_COLUMNS' and CHANGE_COLUMNS' order.
 */
function* rows(now, count) {
  const span = DAYS * 24 * 3600 * 1000;
  for (let i = 1; i <= count; i += 1) {
    const created = now - span + Math.floor((span * i) / (count + 1));
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
export function fillSqlite(path, now, count) {
  const db = new Database(path);
  const insert = (table, columns) =>
    db.prepare(`insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
  const lead = insert('leads', LEAD_COLUMNS);
  const change = insert('lead_status_changes', CHANGE_COLUMNS);
  db.transaction(() => {
    for (const row of rows(now, count)) {
      lead.run(...row.lead);
      for (const c of row.changes) change.run(...c);
    }
  })();
  db.close();
}

/** The rows into PostgreSQL: multi-row inserts of 1,000 in one transaction, then ANALYZE, as after a real load. */
export async function fillPostgres(url, now, count) {
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
  for (const row of rows(now, count)) {
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
