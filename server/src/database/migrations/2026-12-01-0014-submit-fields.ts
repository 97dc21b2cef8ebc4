import { type Kysely, sql } from 'kysely';
import { dialectOf } from '../dialect-sql';
import { up as submitFunctionBefore } from './2026-12-01-0011-submit-function';

// Frozen once released: a change to the schema is a new migration (a changed decision replaces the function there).

/**
 * PostgreSQL only: `leads_submit` as migration 0011 made it, but for a repeat's changed fields, which it reads by name
 * from the plan's `fields` (the form's fields in order, `LEAD_FIELDS` of @stickers/shared) instead of six fields
 * written into it: a field added to the form is compared and written into `changes` with no change to the function.
 * The same answer as before for the same fields: the order of `fields`, an empty incoming field is no change, a
 * username is compared without letter case, the JSON text as `JSON.stringify` writes it. A plan without `fields` (an
 * instance of the version before, during a rolling deploy) is read with the six fields it knew.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (dialectOf(db) !== 'postgres') return;
  await sql
    .raw(
      String.raw`
create or replace function leads_submit(p jsonb) returns jsonb
language plpgsql as $fn$
declare
  now_ms bigint := (p->>'now')::bigint;
  story text := p->>'late_story';
  fallback jsonb := p->'fallback';
  known record;
  nth bigint;
  target leads%rowtype;
  changes text;
  row_id bigint;
  noted boolean := false;
begin
  perform pg_advisory_xact_lock((p->>'lock_key')::bigint);

  -- A known request_id first: a landing's retry is never throttled.
  select * into known from (
    select id as lead_id, false as is_repeat, id as row_id, fallback_message_id is not null as has_fallback
      from leads where request_id = p->>'request_id'
    union all
    select lead_id, true, id, fallback_message_id is not null from lead_repeats where request_id = p->>'request_id'
  ) k limit 1;
  if found then
    if fallback is not null and jsonb_typeof(fallback) = 'object' and not known.has_fallback then
      if known.is_repeat then
        update lead_repeats set fallback_chat_id = fallback->>'chat_id', fallback_message_id = (fallback->>'message_id')::bigint,
          fallback_sent_at = (fallback->>'sent_at')::bigint, fallback_state = 'answer', fallback_next_at = now_ms
          where id = known.row_id and fallback_message_id is null;
      else
        update leads set fallback_chat_id = fallback->>'chat_id', fallback_message_id = (fallback->>'message_id')::bigint,
          fallback_sent_at = (fallback->>'sent_at')::bigint,
          fallback_state = case when published_at is null then 'pending' else 'answer' end, fallback_next_at = now_ms
          where id = known.row_id and fallback_message_id is null;
      end if;
      noted := found;
      if noted then
        insert into lead_events (lead_id, repeat_id, kind, at, detail)
        values (known.lead_id, case when known.is_repeat then known.row_id end, 'received_late', now_ms,
                story || ' as ' || case when known.is_repeat then 'a repeat of #' || known.lead_id else 'lead #' || known.lead_id end
                || ', stored before; the fallback message is recorded');
      end if;
    end if;
    return jsonb_build_object('kind', 'duplicate', 'lead_number', known.lead_id, 'repeat', known.is_repeat, 'fallback_noted', noted);
  end if;

  select at into nth from rate_events
    where kind = p->>'count' and key_hash = p->>'ip_hash' and at > (p->'limits'->>'visitor_since')::bigint
    order by at desc limit 1 offset ((p->'limits'->>'visitor_limit')::bigint - 1);
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

  select * into target from leads
    where (telegram_key = p->'match'->>'telegram_key' or phone = p->'match'->>'phone')
      and created_at > (p->'match'->>'since')::bigint and created_at <= (p->'match'->>'until')::bigint
      and status != 'spam' and anonymised_at is null
    order by created_at desc, id desc limit 1;
  if found then
    -- The fields that differ from the lead as first stored, as JSON.stringify writes them (field order, no spaces);
    -- an empty incoming field is no change, and a username is compared without letter case.
    select coalesce('{' || string_agg(to_json(f.k)::text || ':' || to_json(p->'incoming'->>f.k)::text, ',' order by f.ord) || '}', '{}')
      into changes
      from jsonb_array_elements_text(coalesce(p->'fields', '["name", "telegram", "phone", "date", "guests", "comment"]'::jsonb))
           with ordinality as f(k, ord)
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
`,
    )
    .execute(db);
}

/** The function as migration 0011 made it. */
export async function down(db: Kysely<any>): Promise<void> {
  await submitFunctionBefore(db);
}
