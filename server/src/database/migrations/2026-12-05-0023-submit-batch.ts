import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect-sql';
import { up as submitDecisionBefore } from './2026-12-05-0017-submit-decision';

// Frozen once released: a change to the schema is a new migration (a changed decision replaces the function there).

/**
 * PostgreSQL only (SQLite runs the decision as TypeScript, leads/submit-decision.ts: nothing to change there). The
 * decision of migration 0017 without its lock, as `leads_decide(plan jsonb)`, so that `leads_submit(plan)` (the lock,
 * then the decision: one call as before) and `leads_submit_batch(plans jsonb)` (the lock once, then each plan in order)
 * share it. Same checks, same answers. Two reads are planned afresh at each call (EXECUTE) instead of once per
 * connection: the visitor's limit and the repeat's lead. plpgsql keeps a statement's generic plan from its sixth call
 * on, and a plan made while the tables were small (a new database, before its first ANALYZE) read them by time alone —
 * every event of the visitor's window, every lead of the last 24 hours — for the life of the connection
 * (docs/performance.md, PostgreSQL per lead).
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await sql
    .raw(
      String.raw`
create or replace function leads_decide(p jsonb) returns jsonb
language plpgsql as $fn$
declare
  now_ms bigint := (p->>'now')::bigint;
  story text := p->>'late_story';
  fallback jsonb := case when jsonb_typeof(p->'fallback') = 'object' then p->'fallback' end;
  known record;
  nth bigint;
  target leads%rowtype;
  changes text;
  row_id bigint;
  noted boolean := false;
  changed bigint;
begin
  -- A known request_id first: a landing's retry is never throttled.
  select * into known from (
    select id as lead_id, false as is_repeat, id as row_id, fallback_message_id is not null as has_fallback
      from leads where request_id = p->>'request_id'
    union all
    select lead_id, true, id, fallback_message_id is not null from lead_repeats where request_id = p->>'request_id'
  ) k limit 1;
  if found then
    if fallback is not null and not known.has_fallback then
      if fallback ? 'chat_id' then
        -- A plan of the version before: the message alone.
        fallback := jsonb_build_object('fallback_chat_id', fallback->'chat_id', 'fallback_message_id', fallback->'message_id',
                                       'fallback_sent_at', fallback->'sent_at');
      end if;
      -- The message's columns as the plan names them; a lead without a card yet may still adopt it (pending), else
      -- (and a repeat) it gets its reply (answer).
      execute format('update %1$I set (%2$s) = (select %2$s from jsonb_populate_record(null::%1$I, $1)), fallback_state = %3$s '
                     'where id = $2 and fallback_message_id is null',
                     case when known.is_repeat then 'lead_repeats' else 'leads' end,
                     (select string_agg(quote_ident(k), ', ') from jsonb_object_keys(fallback) as k
                       where k like 'fallback\_%' and k != 'fallback_state'),
                     case when known.is_repeat then '''answer''' else 'case when published_at is null then ''pending'' else ''answer'' end' end)
        using fallback, known.row_id;
      get diagnostics changed = row_count;
      noted := changed = 1;
      if noted then
        insert into lead_events (lead_id, repeat_id, kind, at, detail)
        values (known.lead_id, case when known.is_repeat then known.row_id end, 'received_late', now_ms,
                story || ' as ' || case when known.is_repeat then 'a repeat of #' || known.lead_id else 'lead #' || known.lead_id end
                || ', stored before; the fallback message is recorded');
      end if;
    end if;
    return jsonb_build_object('kind', 'duplicate', 'lead_number', known.lead_id, 'repeat', known.is_repeat, 'fallback_noted', noted);
  end if;

  -- Planned for its values at each call (EXECUTE), as the repeat's lead below: see this migration's comment.
  execute 'select at from rate_events where kind = $1 and key_hash = $2 and at > $3 order by at desc limit 1 offset $4'
    into nth
    using p->>'count', p->>'ip_hash', (p->'limits'->>'visitor_since')::bigint, (p->'limits'->>'visitor_limit')::bigint - 1;
  if nth is not null then
    return jsonb_build_object('kind', 'limited', 'why', 'visitor', 'nth', nth);
  end if;
  nth := leads_nth_accepted(p->>'count', (p->'limits'->>'hourly_since')::bigint, (p->'limits'->>'hourly_limit')::bigint);
  if nth is not null then
    return jsonb_build_object('kind', 'limited', 'why', 'hourly', 'nth', nth);
  end if;

  -- Counted at its arrival, in its own count.
  insert into rate_events (kind, key_hash, at) values (p->>'count', p->>'ip_hash', now_ms);
  insert into rate_minutes (kind, minute, n) values (p->>'count', floor(now_ms::numeric / 60000)::bigint, 1)
    on conflict (kind, minute) do update set n = rate_minutes.n + 1;

  -- A replay sent before its contact was erased is stored without its personal data (erased_contacts, migration 0013).
  if jsonb_typeof(p->'erased') = 'object' and exists (
      select 1 from erased_contacts
       where erased_at >= (p->>'created_at')::bigint
         and contact_hash in (select jsonb_array_elements_text(p->'erased'->'hashes'))) then
    row_id := leads_insert_row('leads', p->'erased'->'lead');
    insert into lead_events (lead_id, repeat_id, kind, at, detail)
    values (row_id, null, 'received_late', now_ms,
            story || ' as lead #' || row_id || ', anonymised: its contact was erased after it was submitted');
    return jsonb_build_object('kind', 'created', 'lead_number', row_id);
  end if;

  -- The newest lead of either contact in the window: one probe per contact, each on its (contact, created_at) index,
  -- planned for the call's values (EXECUTE; its id alone, a short plan); never a walk over the window's leads.
  execute 'select id from ('
          '  (select id, created_at from leads where telegram_key = $1 and created_at > $3 and created_at <= $4 '
          '     and status != ''spam'' and anonymised_at is null order by created_at desc, id desc limit 1) '
          '  union all '
          '  (select id, created_at from leads where phone = $2 and created_at > $3 and created_at <= $4 '
          '     and status != ''spam'' and anonymised_at is null order by created_at desc, id desc limit 1) '
          ') c order by created_at desc, id desc limit 1'
    into row_id
    using p->'match'->>'telegram_key', p->'match'->>'phone', (p->'match'->>'since')::bigint, (p->'match'->>'until')::bigint;
  if row_id is not null then
    select * into target from leads where id = row_id;
    -- The fields (the plan's, in order) that differ from the lead as first stored, as JSON.stringify writes them (no
    -- spaces); an empty incoming field is no change, and a username is compared without letter case.
    select coalesce('{' || string_agg(to_json(f.k)::text || ':' || to_json(p->'incoming'->>f.k)::text, ',' order by f.ord) || '}', '{}')
      into changes
      from jsonb_array_elements_text(p->'fields') with ordinality as f(k, ord)
      where p->'incoming'->>f.k is not null
        and (case when f.k = 'telegram' then lower(to_jsonb(target)->>f.k) is distinct from lower(p->'incoming'->>f.k)
                  else to_jsonb(target)->>f.k is distinct from p->'incoming'->>f.k end);
    row_id := leads_insert_row('lead_repeats', p->'repeat' || jsonb_build_object('lead_id', target.id, 'changes', changes));
    if story is not null then
      insert into lead_events (lead_id, repeat_id, kind, at, detail)
      values (target.id, row_id, 'received_late', now_ms, story || ' as a repeat of #' || target.id);
    end if;
    return jsonb_build_object('kind', 'repeat', 'lead_number', target.id);
  end if;

  row_id := leads_insert_row('leads', p->'lead');
  if story is not null then
    insert into lead_events (lead_id, repeat_id, kind, at, detail) values (row_id, null, 'received_late', now_ms, story || ' as lead #' || row_id);
  end if;
  return jsonb_build_object('kind', 'created', 'lead_number', row_id);
end
$fn$;

create or replace function leads_submit(p jsonb) returns jsonb
language plpgsql as $fn$
begin
  -- The lock (pg_advisory_xact_lock, waiting at most the session's lock_timeout, then 55P03), held to the end of the
  -- caller's transaction; then the decision.
  perform pg_advisory_xact_lock((p->>'lock_key')::bigint);
  return leads_decide(p);
end
$fn$;

create or replace function leads_submit_batch(lock_key bigint, plans jsonb) returns jsonb
language plpgsql as $fn$
-- Group commit: the lock once, then each plan of the array in order, each seeing the ones before it (one transaction);
-- the verdicts in the plans' order. An error fails the whole call: nothing of it is stored.
declare
  verdicts jsonb := '[]'::jsonb;
  plan jsonb;
begin
  perform pg_advisory_xact_lock(lock_key);
  for plan in select value from jsonb_array_elements(plans) with ordinality as e(value, ord) order by ord loop
    verdicts := verdicts || jsonb_build_array(leads_decide(plan));
  end loop;
  return verdicts;
end
$fn$;
`,
    )
    .execute(db);
}

/** The functions as migration 0017 made them. */
export async function down(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await sql`drop function leads_submit_batch(bigint, jsonb)`.execute(db);
  await submitDecisionBefore(db);
  await sql`drop function leads_decide(jsonb)`.execute(db);
}
