import { type Kysely, sql } from 'kysely';
import { dialectOf, int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.

/**
 * The latest of some times, each possibly null (counted as 0): SQLite's `max(a, b, …)` is null when any argument is,
 * PostgreSQL's `greatest` skips nulls; with every argument `coalesce`d both give the same.
 */
const latest = (postgres: boolean, times: string[]) =>
  `${postgres ? 'greatest' : 'max'}(${times.map((t) => `coalesce(${t}, 0)`).join(', ')})`;

/** The times of a lead's row that mark a change of its state: its arrival, a status, its card, its erasure. */
const LEAD_TIMES = (l: string) => [
  `${l}.created_at`,
  `${l}.received_at`,
  `${l}.status_changed_at`,
  `${l}.published_at`,
  `${l}.anonymised_at`,
];
/** A repeat's times: when the visitor sent it and when it arrived. */
const REPEAT_TIMES = (r: string) => [`${r}.created_at`, `${r}.received_at`];

/**
 * `leads.updated_at`: when the lead's state last changed (ms) — created or received, a status, a repeat, its card
 * published, its erasure — for `GET /leads?updated_since=` (an integrator's "what changed since I last asked"), with
 * the index `(updated_at, id)` that reads it in that order.
 *
 * The app's clock is its own (tests move it), and a trigger cannot read it, so the triggers take the row's own times:
 * the latest of the lead's time columns and of its repeats', never lower than before. They keep it current whoever
 * writes the change (the submit, PostgreSQL's `leads_submit`, a button, the CLI, housekeeping). Existing rows take the
 * latest of their times and their repeats'.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = dialectOf(db) === 'postgres';
  await db.schema
    .alterTable('leads')
    .addColumn('updated_at', int64(db), (c) => c.notNull().defaultTo(0))
    .execute();
  const repeats = `(select max(${latest(postgres, REPEAT_TIMES('r'))}) from lead_repeats r where r.lead_id = leads.id)`;
  await sql.raw(`update leads set updated_at = ${latest(postgres, [...LEAD_TIMES('leads'), repeats])}`).execute(db);
  await db.schema.createIndex('leads_updated').on('leads').columns(['updated_at', 'id']).execute();

  if (postgres) {
    await sql
      .raw(
        String.raw`
create function lead_updated_at() returns trigger language plpgsql as $fn$
begin
  if tg_op = 'INSERT' then
    new.updated_at := ${latest(true, ['new.updated_at', ...LEAD_TIMES('new')])};
  else
    new.updated_at := ${latest(true, ['old.updated_at', 'new.updated_at', ...LEAD_TIMES('new')])};
  end if;
  return new;
end $fn$;
create trigger lead_updated_at before insert or update on leads for each row execute function lead_updated_at();

create function lead_updated_by_repeat() returns trigger language plpgsql as $fn$
begin
  update leads set updated_at = ${latest(true, ['updated_at', ...REPEAT_TIMES('new')])} where id = new.lead_id;
  return null;
end $fn$;
create trigger lead_updated_by_repeat after insert on lead_repeats for each row execute function lead_updated_by_repeat();
`,
      )
      .execute(db);
    return;
  }
  // SQLite: AFTER triggers that update the row (its `update of` lists leave out `updated_at`, so they do not fire again).
  const triggers = [
    `create trigger lead_updated_new after insert on leads begin
       update leads set updated_at = ${latest(false, ['new.updated_at', ...LEAD_TIMES('new')])} where id = new.id; end`,
    `create trigger lead_updated_change after update of status, status_changed_at, published_at, anonymised_at, received_at on leads begin
       update leads set updated_at = ${latest(false, ['updated_at', ...LEAD_TIMES('new')])} where id = new.id; end`,
    `create trigger lead_updated_repeat after insert on lead_repeats begin
       update leads set updated_at = ${latest(false, ['updated_at', ...REPEAT_TIMES('new')])} where id = new.lead_id; end`,
  ];
  for (const trigger of triggers) await sql.raw(trigger).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql.raw('drop trigger lead_updated_at on leads; drop trigger lead_updated_by_repeat on lead_repeats').execute(db);
    await sql.raw('drop function lead_updated_at(); drop function lead_updated_by_repeat()').execute(db);
  } else {
    for (const name of ['new', 'change', 'repeat']) await sql.raw(`drop trigger lead_updated_${name}`).execute(db);
  }
  await db.schema.dropIndex('leads_updated').execute();
  await db.schema.alterTable('leads').dropColumn('updated_at').execute();
}
