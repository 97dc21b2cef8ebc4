/**
 * One set of migrations for SQLite and PostgreSQL (first step). On PostgreSQL — a real server these tests
 * start themselves (test/support/postgres.ts: Debian's postgresql package, else the npm package's binaries; without
 * either these tests fail saying so) — the migrations give every table and column of schema.ts with a compatible type, run twice
 * as a no-op, and a lead with every column set comes back as it went in (numbers as numbers). On SQLite the
 * migrations give byte for byte the schema they gave before the dialect helpers existed (a fixture dumped then).
 *
 * The app does not run on PostgreSQL yet: `openPostgres` is used by these tests only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { type MigrationProvider, Migrator, NO_MIGRATIONS, type Selectable, sql } from 'kysely';
import { type LeadsDb, migrateToLatest, openDatabase, openPostgres } from '../src/database/database';
import { MIGRATIONS } from '../src/database/migrations';
import type { Database, NewLead } from '../src/database/schema';
import { startPostgres, type TestPostgres } from './support/postgres';

const provider: MigrationProvider = { getMigrations: () => Promise.resolve(MIGRATIONS) };
const LAST_BEFORE_POSTGRES = '2026-12-01-0005-late-leads';
const SQLITE_FIXTURE = join(__dirname, 'support', 'sqlite-schema-0001-0005.sql');

/**
 * Every table and column of schema.ts, with its kind and whether it may be null. The type makes the compiler check
 * it against schema.ts (`npm test` typechecks): a column added there and missing here, or a kind that does not match
 * the TypeScript type, is a type error.
 */
type Kind<V> = [V] extends [string | null] ? 'text' : [V] extends [number | null] ? 'number' : never;
type ColumnSpec<V> = null extends V ? `${Kind<V>} null` : Kind<V>;
type Expected = { [T in keyof Database]: { [C in keyof Selectable<Database[T]>]-?: ColumnSpec<Selectable<Database[T]>[C]> } };

const LATE = {
  received_at: 'number null',
  late_route: 'text null',
  late_reason: 'text null',
  fallback_chat_id: 'text null',
  fallback_message_id: 'number null',
  fallback_sent_at: 'number null',
  fallback_state: 'text null',
} as const;

const SOURCE = {
  source_landing: 'text null',
  utm_source: 'text null',
  utm_medium: 'text null',
  utm_campaign: 'text null',
  utm_content: 'text null',
  utm_term: 'text null',
  source_referrer: 'text null',
  captcha: 'text null',
} as const;

const CONSENT = { consent_accepted_at: 'number null', consent_policy_url: 'text null' } as const;

const EXPECTED: Expected = {
  leads: {
    id: 'number',
    request_id: 'text',
    name: 'text null',
    telegram: 'text null',
    telegram_key: 'text null',
    phone: 'text null',
    date: 'text null',
    guests: 'text null',
    comment: 'text null',
    ip_hash: 'text null',
    status: 'text',
    created_at: 'number',
    published_at: 'number null',
    chat_id: 'text null',
    message_id: 'number null',
    card_thread_id: 'number null',
    last_error: 'text null',
    anonymised_at: 'number null',
    card_format: 'text null',
    status_changed_by: 'text null',
    status_changed_at: 'number null',
    card_dirty_at: 'number null',
    reminded_at: 'number null',
    updated_at: 'number',
    ...LATE,
    ...SOURCE,
    ...CONSENT,
  },
  lead_repeats: {
    id: 'number',
    lead_id: 'number',
    request_id: 'text',
    created_at: 'number',
    changes: 'text',
    ip_hash: 'text null',
    notified_at: 'number null',
    last_error: 'text null',
    notify_outcome: 'text null',
    ...LATE,
    ...SOURCE,
    ...CONSENT,
  },
  rate_events: { id: 'number', kind: 'text', key_hash: 'text', at: 'number' },
  alert_throttles: { key: 'text', last_sent_at: 'number' },
  settings: { key: 'text', value: 'text', updated_at: 'number' },
  lead_status_changes: {
    id: 'number',
    lead_id: 'number',
    from_status: 'text',
    to_status: 'text',
    user_id: 'number',
    user_name: 'text',
    at: 'number',
  },
  job_runs: { key: 'text', at: 'number' },
  lead_events: { id: 'number', lead_id: 'number', repeat_id: 'number null', kind: 'text', at: 'number', detail: 'text null' },
  leases: { name: 'text', holder: 'text', until: 'number' },
  rate_minutes: { kind: 'text', minute: 'number', n: 'number' },
  webhook_sources: { type: 'text', since_id: 'number', created_at: 'number' },
  webhook_events: { id: 'number', public_id: 'text', lead_id: 'number', type: 'text', source_id: 'number', at: 'number', data: 'text' },
  outbox: {
    id: 'number',
    kind: 'text',
    lead_id: 'number',
    repeat_id: 'number null',
    event_id: 'number null',
    message_id: 'number null',
    target: 'text',
    replayed_at: 'number null',
    created_at: 'number',
    next_at: 'number',
    attempts: 'number',
    first_failed_at: 'number null',
    last_error: 'text null',
    claimed_by: 'text null',
    claimed_until: 'number null',
    done_at: 'number null',
    outcome: 'text null',
  },
  telegram_updates: { update_id: 'number', seen_at: 'number', handled_at: 'number null' },
  erased_contacts: { contact_hash: 'text', erased_at: 'number' },
  telegram_links: {
    payload_hash: 'text',
    lead_id: 'number',
    created_at: 'number',
    expires_at: 'number',
    used_at: 'number null',
    tg_user_id: 'number null',
    tg_username: 'text null',
    tg_first_name: 'text null',
    tg_last_name: 'text null',
    stopped_at: 'number null',
    blocked_at: 'number null',
    chosen_at: 'number null',
  },
  lead_messages: {
    id: 'number',
    lead_id: 'number',
    direction: 'text',
    author_tg_id: 'number null',
    author_name: 'text null',
    to_tg_id: 'number null',
    at: 'number',
    text: 'text null',
    media: 'text null',
    tg_chat_id: 'text null',
    tg_message_id: 'number null',
    copy_chat_id: 'text null',
    copy_message_id: 'number null',
    state: 'text',
    error: 'text null',
  },
  lead_notices: { chat_id: 'text', message_id: 'number', lead_id: 'number' },
};

/** table → column → `<type> null|not null`, as each database names its types. */
type Described = Record<string, Record<string, string>>;

/**
 * What schema.ts asks of PostgreSQL: text as `text`; numbers as `bigint` (times in ms, ids, Telegram ids: more than
 * 32 bits), except the small retry counters (`*_attempts`), which are `integer`.
 */
function expectedOnPostgres(): Described {
  return Object.fromEntries(
    Object.entries(EXPECTED).map(([table, columns]) => [
      table,
      Object.fromEntries(
        Object.entries(columns as Record<string, string>).map(([column, spec]) => {
          const [kind, nullable] = spec.split(' ');
          const type = kind === 'text' ? 'text' : column.endsWith('_attempts') ? 'integer' : 'bigint';
          return [column, `${type} ${nullable ? 'null' : 'not null'}`];
        }),
      ),
    ]),
  );
}

async function describePostgres(db: LeadsDb): Promise<Described> {
  const { rows } = await sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>`
    select table_name, column_name, data_type, is_nullable from information_schema.columns
    where table_schema = current_schema() and table_name not like 'kysely_%' order by table_name, ordinal_position`.execute(db);
  const described: Described = {};
  for (const r of rows) (described[r.table_name] ??= {})[r.column_name] = `${r.data_type} ${r.is_nullable === 'YES' ? 'null' : 'not null'}`;
  return described;
}

/** Index name → definition (`pg_indexes`), without the ones that primary keys and `unique` make. */
async function postgresIndexes(db: LeadsDb): Promise<Record<string, string>> {
  const { rows } = await sql<{ indexname: string; indexdef: string }>`
    select indexname, indexdef from pg_indexes where schemaname = current_schema() and tablename not like 'kysely_%'
    and indexname not in (select conname from pg_constraint) order by indexname`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.indexname, r.indexdef]));
}

/** `sqlite_master` as text, in creation order: every statement the migrations made SQLite run. */
function dumpSqliteSchema(sqlite: BetterSqlite3.Database): string {
  const rows = sqlite.prepare('select type, name, tbl_name, sql from sqlite_master order by rowid').all() as {
    type: string;
    name: string;
    tbl_name: string;
    sql: string | null;
  }[];
  return rows.map((r) => `-- ${r.type} ${r.name} on ${r.tbl_name}\n${r.sql ?? '(automatic)'};\n`).join('\n');
}

/** A lead with every column set, with numbers beyond 32 bits where the column allows them. */
function fullLead(requestId: string): NewLead {
  const t = 1_764_000_000_000;
  return {
    request_id: requestId,
    name: 'Анна',
    telegram: '@Anna_K',
    telegram_key: 'anna_k',
    phone: '+79991234567',
    date: '2026-12-31',
    guests: '10–20',
    comment: 'Кавычки \' " и перевод\nстроки, эмодзи 🎉',
    ip_hash: 'a'.repeat(64),
    status: 'in_progress',
    created_at: t,
    published_at: t + 1,
    chat_id: '-1001234567890',
    message_id: 2_147_483_648,
    card_thread_id: 12,
    last_error: '429: retry after 3',
    anonymised_at: t + 3,
    card_format: 'plain',
    status_changed_by: '@manager',
    status_changed_at: t + 4,
    card_dirty_at: t + 5,
    reminded_at: t + 7,
    updated_at: t + 10,
    received_at: t + 8,
    late_route: 'fallback',
    late_reason: '503',
    fallback_chat_id: '-1009876543210',
    fallback_message_id: 77,
    fallback_sent_at: t + 9,
    fallback_state: 'answer',
    source_landing: 'wedding',
    utm_source: 'yandex',
    utm_medium: 'cpc',
    utm_campaign: 'лето',
    utm_content: 'banner',
    utm_term: 'стикеры',
    source_referrer: 'yandex.ru',
    captcha: 'unchecked',
    consent_accepted_at: t + 8,
    consent_policy_url: 'https://stickers.example/privacy',
  };
}

describe('the migrations on SQLite', () => {
  it('give byte for byte the schema that migrations 0001–0005 gave before PostgreSQL (sqlite_master vs the fixture)', async () => {
    const { db, sqlite } = openDatabase(':memory:');
    try {
      const { error } = await new Migrator({ db, provider }).migrateTo(LAST_BEFORE_POSTGRES);
      expect(error).toBeUndefined();
      expect(dumpSqliteSchema(sqlite)).toBe(readFileSync(SQLITE_FIXTURE, 'utf8'));
    } finally {
      await db.destroy();
    }
  });

  it('give every table and column of schema.ts', async () => {
    const { db, sqlite } = openDatabase(':memory:');
    try {
      await migrateToLatest(db);
      const described: Described = {};
      for (const table of Object.keys(EXPECTED)) {
        const columns = sqlite.pragma(`table_info(${table})`) as { name: string; type: string; notnull: number; pk: number }[];
        described[table] = Object.fromEntries(
          columns.map((c) => [c.name, `${c.type.toLowerCase()} ${c.notnull || c.pk ? 'not null' : 'null'}`]),
        );
      }
      const expected = Object.fromEntries(
        Object.entries(EXPECTED).map(([table, columns]) => [
          table,
          Object.fromEntries(
            Object.entries(columns as Record<string, string>).map(([column, spec]) => {
              const [kind, nullable] = spec.split(' ');
              return [column, `${kind === 'text' ? 'text' : 'integer'} ${nullable ? 'null' : 'not null'}`];
            }),
          ),
        ]),
      );
      expect(described).toEqual(expected);
    } finally {
      await db.destroy();
    }
  });
});

describe('the migrations on PostgreSQL', () => {
  let pg: TestPostgres | undefined;
  const opened: LeadsDb[] = [];
  /** A fresh database on the test server, opened through `openPostgres`. */
  const freshDb = async (name: string, max?: number): Promise<LeadsDb> => {
    const { db } = openPostgres(await pg!.createDatabase(name), { max });
    opened.push(db);
    return db;
  };

  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const db of opened) await db.destroy();
    await pg?.stop();
  });

  it('give every table and column of schema.ts with a compatible type, the same indexes as SQLite, and run twice as a no-op', async () => {
    const db = await freshDb('schema');
    expect(await migrateToLatest(db)).toEqual(Object.keys(MIGRATIONS));
    const described = await describePostgres(db);
    expect(described).toEqual(expectedOnPostgres());

    // The same indexes as on SQLite, the partial ones with their condition.
    const indexes = await postgresIndexes(db);
    const { db: lite, sqlite } = openDatabase(':memory:');
    await migrateToLatest(lite);
    const liteIndexes = (
      sqlite.prepare(`select name, sql from sqlite_master where type = 'index' and sql is not null order by name`).all() as {
        name: string;
        sql: string;
      }[]
    ).map((r) => [r.name, / where /i.test(r.sql)]);
    await lite.destroy();
    expect(Object.entries(indexes).map(([name, def]) => [name, / WHERE /.test(def)])).toEqual(liteIndexes);
    expect(indexes.leads_without_card).toMatch(/WHERE \(published_at IS NULL\)$/);
    expect(indexes.outbox_not_done).toMatch(/\(target, kind, id\) WHERE \(done_at IS NULL\)$/);
    expect(indexes.outbox_waiting).toMatch(/\(lead_id, done_at, target, id\)$/);
    expect(indexes.outbox_event).toMatch(/WHERE \(event_id IS NOT NULL\)$/);
    expect(indexes.leads_updated).toMatch(/\(updated_at, id\)$/);
    expect(indexes.leads_card).toMatch(/\(chat_id, message_id\) WHERE \(message_id IS NOT NULL\)$/);

    // Twice: nothing to do, nothing changed.
    expect(await migrateToLatest(db)).toEqual([]);
    expect(await describePostgres(db)).toEqual(described);
    expect(await postgresIndexes(db)).toEqual(indexes);
  });

  it('round-trip a lead with every column set: numbers stay numbers (bigint read as a number), text stays text', async () => {
    const db = await freshDb('round_trip');
    await migrateToLatest(db);
    const written = fullLead('req-full');
    const { id } = await db.insertInto('leads').values(written).returning('id').executeTakeFirstOrThrow();
    expect(id).toBe(1);
    const read = await db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(read).toEqual({ id, ...written });
    expect(Object.keys(read).sort()).toEqual(Object.keys(EXPECTED.leads).sort());
    for (const [column, spec] of Object.entries(EXPECTED.leads)) {
      expect([column, typeof read[column as keyof typeof read]]).toEqual([column, spec.startsWith('number') ? 'number' : 'string']);
    }

    // A lead with only what is required: the defaults and nulls are the same as on SQLite.
    const { id: second } = await db
      .insertInto('leads')
      .values({ request_id: 'req-min', created_at: 1 })
      .returning('id')
      .executeTakeFirstOrThrow();
    const minimal = await db.selectFrom('leads').selectAll().where('id', '=', second).executeTakeFirstOrThrow();
    expect(minimal).toMatchObject({
      id: 2,
      status: 'new',
      name: null,
    });

    // A Telegram user id beyond 32 bits, and counts (int8 on PostgreSQL) as numbers.
    const userId = 7_123_456_789;
    await db
      .insertInto('lead_status_changes')
      .values({ lead_id: id, from_status: 'new', to_status: 'won', user_id: userId, user_name: 'm', at: 2 })
      .execute();
    expect(await db.selectFrom('lead_status_changes').select('user_id').executeTakeFirstOrThrow()).toEqual({ user_id: userId });
    expect(
      await db
        .selectFrom('leads')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ).toEqual({ n: 2 });
  });

  it('keep the constraints: unique request_id, the known statuses, repeats and events cascade with their lead', async () => {
    const db = await freshDb('constraints');
    await migrateToLatest(db);
    const { id } = await db.insertInto('leads').values(fullLead('req-c')).returning('id').executeTakeFirstOrThrow();
    await expect(db.insertInto('leads').values(fullLead('req-c')).execute()).rejects.toThrow(
      /duplicate key value violates unique constraint/,
    );
    await expect(
      db
        .insertInto('leads')
        .values({ ...fullLead('req-d'), status: 'bogus' as never })
        .execute(),
    ).rejects.toThrow(/leads_status_known/);
    await db.insertInto('lead_repeats').values({ lead_id: id, request_id: 'req-r', created_at: 1, changes: '{}' }).execute();
    await db.insertInto('lead_events').values({ lead_id: id, kind: 'published', at: 1, detail: null }).execute();
    await db.deleteFrom('leads').where('id', '=', id).execute();
    expect(await db.selectFrom('lead_repeats').selectAll().execute()).toEqual([]);
    expect(await db.selectFrom('lead_events').selectAll().execute()).toEqual([]);
  });

  it('refuse to read a bigint beyond Number.MAX_SAFE_INTEGER instead of rounding it', async () => {
    const db = await freshDb('unsafe');
    await expect(sql`select ${sql.raw('9007199254740993')}::bigint as n`.execute(db)).rejects.toThrow(/9007199254740993.*MAX_SAFE_INTEGER/);
    // The pool is still usable afterwards.
    expect((await sql<{ n: number }>`select 9007199254740991::bigint as n`.execute(db)).rows).toEqual([{ n: 9007199254740991 }]);
  });

  it('are applied once when two instances migrate the same database at the same time, and go down and up again', async () => {
    const name = 'two_instances';
    const first = await freshDb(name);
    const { db: second } = openPostgres(pg!.url.replace(/\/postgres$/, `/${name}`));
    opened.push(second);
    const [a, b] = await Promise.all([migrateToLatest(first), migrateToLatest(second)]);
    expect([...a, ...b].sort()).toEqual(Object.keys(MIGRATIONS).sort());
    const applied = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(first);
    expect(applied.rows).toEqual([{ n: Object.keys(MIGRATIONS).length }]);

    const described = await describePostgres(first);
    const { error } = await new Migrator({ db: first, provider }).migrateTo(NO_MIGRATIONS);
    expect(error).toBeUndefined();
    expect(await describePostgres(first)).toEqual({});
    await migrateToLatest(first);
    expect(await describePostgres(first)).toEqual(described);
  });
});
