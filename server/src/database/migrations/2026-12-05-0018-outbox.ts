import { type Kysely, sql } from 'kysely';
import { autoIncrementPrimaryKey, dialectOf, int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.

/** The Telegram rows' `target`: one lane for every card, edit, ping and reply (the group sees them in order). */
const TELEGRAM = `'telegram'`;

/** An edit row, unless one waits unclaimed already (it will show this change too). `l` is the lead's row. */
const editRow = (l: string) => `
  insert into outbox (kind, lead_id, target, created_at, next_at)
  select 'card_edit', ${l}.id, ${TELEGRAM}, ${l}.card_dirty_at, 0
  where not exists (
    select 1 from outbox where lead_id = ${l}.id and kind = 'card_edit' and done_at is null and claimed_by is null)`;
const cardRow = (l: string) => `
  insert into outbox (kind, lead_id, target, created_at, next_at)
  values ('card', ${l}.id, ${TELEGRAM}, coalesce(${l}.received_at, ${l}.created_at), 0)`;
const leadReplyRow = (l: string) => `
  insert into outbox (kind, lead_id, target, created_at, next_at)
  values ('fallback_reply', ${l}.id, ${TELEGRAM}, coalesce(${l}.received_at, ${l}.created_at), 0)`;
const pingRow = (r: string) => `
  insert into outbox (kind, lead_id, repeat_id, target, created_at, next_at)
  values ('repeat_ping', ${r}.lead_id, ${r}.id, ${TELEGRAM}, coalesce(${r}.received_at, ${r}.created_at), 0)`;
const repeatReplyRow = (r: string, when = 'true') => `
  insert into outbox (kind, lead_id, repeat_id, target, created_at, next_at)
  select 'fallback_reply', ${r}.lead_id, ${r}.id, ${TELEGRAM}, coalesce(${r}.received_at, ${r}.created_at), 0 where ${when}`;

/** The columns the outbox's rows replace. */
const LEAD_COLUMNS = [
  'publish_attempts',
  'next_attempt_at',
  'card_refresh_attempts',
  'card_refresh_next_at',
  'fallback_attempts',
  'fallback_next_at',
];
const REPEAT_COLUMNS = ['notify_attempts', 'next_attempt_at', 'fallback_attempts', 'fallback_next_at'];

/** When a lead's card must be rewritten: marked while published, or published while marked. */
const EDIT_WHEN = `new.card_dirty_at is not null and new.published_at is not null
  and (old.published_at is null or old.card_dirty_at is null or old.card_dirty_at <> new.card_dirty_at)`;

/**
 * One queue of every effect the server has on the outside world (docs/architecture.md, "The outbox"): a card to
 * publish, a card to rewrite, a repeat's ping, a fallback message's reply, an integrator's webhook delivery. Each row
 * is retried on its own schedule (`attempts`, `next_at`) until it is done, claimed by one instance at a time
 * (`claimed_by` until `claimed_until`, wall-clock ms), in order per lead and target (`telegram`, or the webhook
 * endpoint's URL).
 *
 * The Telegram rows are written by triggers in the very transaction of the change that causes them, whoever
 * writes it (the submit, a button, the CLI's erasure, housekeeping): a new lead or a card gone → `card`; a card marked
 * for rewriting while published (a status, an erasure) → `card_edit`; a repeat → `repeat_ping`; a fallback message
 * waiting for its reply → `fallback_reply`. The webhook rows are written by the webhook recorder with their event.
 *
 * The pending work of the columns and the table this replaces moves in, each row with its attempts and next time:
 * leads without a card, marked cards, repeats not notified, fallback replies, webhook deliveries (delivered ones too,
 * as done rows: a replay reads where an event went).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = dialectOf(db) === 'postgres';
  await db.schema
    .createTable('outbox')
    .addColumn('id', int64(db), autoIncrementPrimaryKey(db))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('lead_id', int64(db), (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addColumn('repeat_id', int64(db))
    .addColumn('event_id', int64(db), (c) => c.references('webhook_events.id').onDelete('cascade'))
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('replayed_at', int64(db))
    .addColumn('created_at', int64(db), (c) => c.notNull())
    .addColumn('next_at', int64(db), (c) => c.notNull())
    .addColumn('attempts', int64(db), (c) => c.notNull().defaultTo(0))
    .addColumn('first_failed_at', int64(db))
    .addColumn('last_error', 'text')
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', int64(db))
    .addColumn('done_at', int64(db))
    .addColumn('outcome', 'text')
    .execute();
  // The runner's claim: due rows, lowest id first; and for each, whether an earlier row of its lead and target waits.
  await db.schema.createIndex('outbox_due').on('outbox').columns(['next_at', 'id']).where(sql.ref('done_at'), 'is', null).execute();
  await db.schema
    .createIndex('outbox_waiting')
    .on('outbox')
    .columns(['lead_id', 'target', 'id'])
    .where(sql.ref('done_at'), 'is', null)
    .execute();
  await db.schema.createIndex('outbox_lead').on('outbox').columns(['lead_id', 'kind']).execute();
  await db.schema.createIndex('outbox_event').on('outbox').column('event_id').execute();

  // The pending work, in the order it was due.
  await sql`
    insert into outbox (kind, lead_id, target, created_at, next_at, attempts, last_error)
    select 'card', id, ${sql.raw(TELEGRAM)}, coalesce(received_at, created_at), next_attempt_at, publish_attempts,
      case when publish_attempts > 0 then last_error end
    from leads where published_at is null order by id`.execute(db);
  await sql`
    insert into outbox (kind, lead_id, target, created_at, next_at, attempts)
    select 'card_edit', id, ${sql.raw(TELEGRAM)}, card_dirty_at, coalesce(card_refresh_next_at, card_dirty_at), card_refresh_attempts
    from leads where card_dirty_at is not null and published_at is not null order by id`.execute(db);
  await sql`
    insert into outbox (kind, lead_id, repeat_id, target, created_at, next_at, attempts, last_error)
    select 'repeat_ping', lead_id, id, ${sql.raw(TELEGRAM)}, coalesce(received_at, created_at), next_attempt_at, notify_attempts, last_error
    from lead_repeats where notified_at is null order by id`.execute(db);
  await sql`
    insert into outbox (kind, lead_id, target, created_at, next_at, attempts)
    select 'fallback_reply', id, ${sql.raw(TELEGRAM)}, coalesce(received_at, created_at), coalesce(fallback_next_at, 0), fallback_attempts
    from leads where fallback_state = 'answer' order by id`.execute(db);
  await sql`
    insert into outbox (kind, lead_id, repeat_id, target, created_at, next_at, attempts)
    select 'fallback_reply', lead_id, id, ${sql.raw(TELEGRAM)}, coalesce(received_at, created_at), coalesce(fallback_next_at, 0),
      fallback_attempts
    from lead_repeats where fallback_state = 'answer' order by id`.execute(db);
  await sql`
    insert into outbox (kind, lead_id, event_id, target, replayed_at, created_at, next_at, attempts, first_failed_at, last_error,
      done_at, outcome)
    select 'webhook', lead_id, event_id, endpoint, replayed_at, created_at, next_attempt_at, attempts, first_failed_at, last_error,
      delivered_at, case when delivered_at is not null then 'delivered' end
    from webhook_deliveries order by id`.execute(db);
  await db.schema.dropTable('webhook_deliveries').execute();

  // The attempts and next times that lived on the leads' and the repeats' rows live on the outbox's now.
  for (const index of [
    'leads_unpublished',
    'lead_repeats_unnotified',
    'leads_card_dirty',
    'leads_fallback_due',
    'lead_repeats_fallback_due',
  ])
    await db.schema.dropIndex(index).execute();
  for (const column of LEAD_COLUMNS) await db.schema.alterTable('leads').dropColumn(column).execute();
  for (const column of REPEAT_COLUMNS) await db.schema.alterTable('lead_repeats').dropColumn(column).execute();
  // Leads without a card (readiness, metrics, /stickers_new).
  await db.schema.createIndex('leads_without_card').on('leads').column('id').where(sql.ref('published_at'), 'is', null).execute();
  // When the newest card went out (readiness).
  await db.schema.createIndex('leads_published_at').on('leads').column('published_at').execute();

  if (postgres) {
    await sql
      .raw(
        String.raw`
create function outbox_of_leads() returns trigger language plpgsql as $fn$
begin
  if tg_op = 'INSERT' then
    if new.published_at is null then ${cardRow('new')}; end if;
    return null;
  end if;
  if new.published_at is null and old.published_at is not null then ${cardRow('new')}; end if;
  if ${EDIT_WHEN} then ${editRow('new')}; end if;
  if new.fallback_state = 'answer' and old.fallback_state is distinct from 'answer' then ${leadReplyRow('new')}; end if;
  return null;
end $fn$;
create trigger outbox_of_leads after insert or update on leads for each row execute function outbox_of_leads();

create function outbox_of_repeats() returns trigger language plpgsql as $fn$
begin
  if tg_op = 'INSERT' then
    ${pingRow('new')};
    if new.fallback_state = 'answer' then ${repeatReplyRow('new')}; end if;
  elsif new.fallback_state = 'answer' and old.fallback_state is distinct from 'answer' then
    ${repeatReplyRow('new')};
  end if;
  return null;
end $fn$;
create trigger outbox_of_repeats after insert or update on lead_repeats for each row execute function outbox_of_repeats();
`,
      )
      .execute(db);
    return;
  }
  const triggers = [
    `create trigger outbox_card_new after insert on leads when new.published_at is null begin ${cardRow('new')}; end`,
    `create trigger outbox_card_again after update of published_at on leads
       when new.published_at is null and old.published_at is not null begin ${cardRow('new')}; end`,
    `create trigger outbox_card_edit after update of published_at, card_dirty_at on leads when ${EDIT_WHEN} begin ${editRow('new')}; end`,
    `create trigger outbox_lead_reply after update of fallback_state on leads
       when new.fallback_state = 'answer' and old.fallback_state is not 'answer' begin ${leadReplyRow('new')}; end`,
    // One trigger for both rows of a repeat: the ping is queued before the reply (SQLite's order of triggers is its own).
    `create trigger outbox_repeat after insert on lead_repeats begin ${pingRow('new')};
       ${repeatReplyRow('new', "new.fallback_state = 'answer'")}; end`,
    `create trigger outbox_repeat_reply after update of fallback_state on lead_repeats
       when new.fallback_state = 'answer' and old.fallback_state is not 'answer' begin ${repeatReplyRow('new')}; end`,
  ];
  for (const trigger of triggers) await sql.raw(trigger).execute(db);
}

/**
 * Back to the columns and the webhook deliveries' own table: the webhook rows go back, the Telegram rows' attempts do
 * not (every waiting lead, repeat and card is due at once).
 */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('leads_without_card').execute();
  await db.schema.dropIndex('leads_published_at').execute();
  for (const [table, columns] of [
    ['leads', LEAD_COLUMNS],
    ['lead_repeats', REPEAT_COLUMNS],
  ] as const) {
    for (const column of columns) {
      const counter = column.endsWith('_attempts');
      const type = counter ? 'integer' : int64(db);
      await db.schema
        .alterTable(table)
        .addColumn(column, type, (c) => (counter || column === 'next_attempt_at' ? c.notNull().defaultTo(0) : c))
        .execute();
    }
  }
  const index = (name: string, table: string, column: string) => db.schema.createIndex(name).on(table).column(column);
  await index('leads_unpublished', 'leads', 'next_attempt_at').where(sql.ref('published_at'), 'is', null).execute();
  await index('lead_repeats_unnotified', 'lead_repeats', 'next_attempt_at').where(sql.ref('notified_at'), 'is', null).execute();
  await index('leads_card_dirty', 'leads', 'card_refresh_next_at').where(sql.ref('card_dirty_at'), 'is not', null).execute();
  for (const table of ['leads', 'lead_repeats'])
    await index(`${table}_fallback_due`, table, 'fallback_next_at').where(sql.ref('fallback_state'), '=', 'answer').execute();
  if (dialectOf(db) === 'postgres') {
    await sql.raw('drop trigger outbox_of_leads on leads; drop trigger outbox_of_repeats on lead_repeats').execute(db);
    await sql.raw('drop function outbox_of_leads(); drop function outbox_of_repeats()').execute(db);
  } else {
    for (const name of ['card_new', 'card_again', 'card_edit', 'lead_reply', 'repeat', 'repeat_reply'])
      await sql.raw(`drop trigger outbox_${name}`).execute(db);
  }
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', int64(db), autoIncrementPrimaryKey(db))
    .addColumn('event_id', int64(db), (c) => c.notNull().references('webhook_events.id').onDelete('cascade'))
    .addColumn('lead_id', int64(db), (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('replayed_at', int64(db))
    .addColumn('created_at', int64(db), (c) => c.notNull())
    .addColumn('attempts', int64(db), (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', int64(db), (c) => c.notNull())
    .addColumn('first_failed_at', int64(db))
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', int64(db))
    .execute();
  const waiting = sql.ref('delivered_at');
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['endpoint', 'next_attempt_at'])
    .where(waiting, 'is', null)
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_waiting')
    .on('webhook_deliveries')
    .columns(['lead_id', 'endpoint', 'id'])
    .where(waiting, 'is', null)
    .execute();
  await db.schema.createIndex('webhook_deliveries_event').on('webhook_deliveries').column('event_id').execute();
  await sql`
    insert into webhook_deliveries (event_id, lead_id, endpoint, replayed_at, created_at, attempts, next_attempt_at, first_failed_at,
      last_error, delivered_at)
    select event_id, lead_id, target, replayed_at, created_at, attempts, next_at, first_failed_at, last_error, done_at
    from outbox where kind = 'webhook' order by id`.execute(db);
  await db.schema.dropTable('outbox').execute();
}
