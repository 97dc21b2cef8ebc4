import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.

/** The latest of some times, each possibly null (counted as 0), on both databases (as 0019 writes it). */
const latest = (postgres: boolean, times: string[]) =>
  `${postgres ? 'greatest' : 'max'}(${times.map((t) => `coalesce(${t}, 0)`).join(', ')})`;

/** The columns of a lead's row whose change is a change of its state (0019's times, and the status itself). */
const STATE = ['status', 'status_changed_at', 'published_at', 'anonymised_at', 'received_at'];
const LEAD_TIMES = (l: string) =>
  ['created_at', 'received_at', 'status_changed_at', 'published_at', 'anonymised_at'].map((c) => `${l}.${c}`);
const REPEAT_TIMES = (r: string) => [`${r}.created_at`, `${r}.received_at`];

/**
 * `leads.updated_at` moves forward with every change of the lead's state, by at least a millisecond: a change whose own
 * time is not after it (taken a moment before another change of the lead committed, or on an instance whose clock is
 * behind) still moves it, so a sync loop that skips the leads it holds at the same `updated_at` misses no change, and
 * a client paging by the cursor gets the lead again (docs/api.md, "Changed since"). 0019's triggers take the latest of
 * the times only. A row written without a change of its state (the card's message, its rewrite) does not move it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await replaceTriggers(db, true);
}

/** 0019's triggers again. */
export async function down(db: Kysely<any>): Promise<void> {
  await replaceTriggers(db, false);
}

/** The triggers of `updated_at`: `moves`, this migration's (a change of state moves it by 1 ms at least); else 0019's. */
async function replaceTriggers(db: Kysely<any>, moves: boolean): Promise<void> {
  const after = (time: string) => (moves ? `${time} + 1` : time);
  if (dialectOf(db) === 'postgres') {
    const changed = `(${STATE.map((c) => `new.${c}`).join(', ')}) is distinct from (${STATE.map((c) => `old.${c}`).join(', ')})`;
    const onChange = `
  elsif ${changed} then
    new.updated_at := ${latest(true, ['old.updated_at + 1', 'new.updated_at', ...LEAD_TIMES('new')])};`;
    await sql
      .raw(
        String.raw`
create or replace function lead_updated_at() returns trigger language plpgsql as $fn$
begin
  if tg_op = 'INSERT' then
    new.updated_at := ${latest(true, ['new.updated_at', ...LEAD_TIMES('new')])};${moves ? onChange : ''}
  else
    new.updated_at := ${latest(true, ['old.updated_at', 'new.updated_at', ...LEAD_TIMES('new')])};
  end if;
  return new;
end $fn$;

create or replace function lead_updated_by_repeat() returns trigger language plpgsql as $fn$
begin
  update leads set updated_at = ${latest(true, [after('updated_at'), ...REPEAT_TIMES('new')])} where id = new.lead_id;
  return null;
end $fn$;
`,
      )
      .execute(db);
    return;
  }
  const changed = moves ? ` when ${STATE.map((c) => `new.${c} is not old.${c}`).join(' or ')}` : '';
  await sql.raw('drop trigger lead_updated_change').execute(db);
  await sql.raw('drop trigger lead_updated_repeat').execute(db);
  await sql
    .raw(
      `create trigger lead_updated_change after update of ${STATE.join(', ')} on leads${changed} begin
         update leads set updated_at = ${latest(false, [after('updated_at'), ...LEAD_TIMES('new')])} where id = new.id; end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger lead_updated_repeat after insert on lead_repeats begin
         update leads set updated_at = ${latest(false, [after('updated_at'), ...REPEAT_TIMES('new')])} where id = new.lead_id; end`,
    )
    .execute(db);
}
