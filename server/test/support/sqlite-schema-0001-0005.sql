-- table kysely_migration on kysely_migration
CREATE TABLE "kysely_migration" ("name" varchar(255) not null primary key, "timestamp" varchar(255) not null);

-- index sqlite_autoindex_kysely_migration_1 on kysely_migration
(automatic);

-- table kysely_migration_lock on kysely_migration_lock
CREATE TABLE "kysely_migration_lock" ("id" varchar(255) not null primary key, "is_locked" integer default 0 not null);

-- index sqlite_autoindex_kysely_migration_lock_1 on kysely_migration_lock
(automatic);

-- table leads on leads
CREATE TABLE "leads" ("id" integer primary key autoincrement, "request_id" text not null unique, "name" text, "telegram" text, "telegram_key" text, "phone" text, "date" text, "guests" text, "comment" text, "ip_hash" text, "status" text default 'new' not null, "created_at" integer not null, "published_at" integer, "chat_id" text, "message_id" integer, "publish_attempts" integer default 0 not null, "next_attempt_at" integer not null, "last_error" text, "anonymised_at" integer, "card_format" text, "status_changed_by" text, "status_changed_at" integer, "card_dirty_at" integer, "card_refresh_attempts" integer default 0 not null, "card_refresh_next_at" integer, "reminded_at" integer, "received_at" integer, "late_route" text, "late_reason" text, "fallback_chat_id" text, "fallback_message_id" integer, "fallback_sent_at" integer, "fallback_state" text, "fallback_attempts" integer default 0 not null, "fallback_next_at" integer, constraint "leads_status_known" check (status in ('new', 'in_progress', 'won', 'lost', 'spam')));

-- index sqlite_autoindex_leads_1 on leads
(automatic);

-- table sqlite_sequence on sqlite_sequence
CREATE TABLE sqlite_sequence(name,seq);

-- index leads_telegram_key on leads
CREATE INDEX "leads_telegram_key" on "leads" ("telegram_key", "created_at");

-- index leads_phone on leads
CREATE INDEX "leads_phone" on "leads" ("phone", "created_at");

-- index leads_unpublished on leads
CREATE INDEX "leads_unpublished" on "leads" ("next_attempt_at") where "published_at" is null;

-- index leads_created_at on leads
CREATE INDEX "leads_created_at" on "leads" ("created_at");

-- table lead_repeats on lead_repeats
CREATE TABLE "lead_repeats" ("id" integer primary key autoincrement, "lead_id" integer not null references "leads" ("id") on delete cascade, "request_id" text not null unique, "created_at" integer not null, "changes" text not null, "ip_hash" text, "notified_at" integer, "notify_attempts" integer default 0 not null, "next_attempt_at" integer not null, "last_error" text, "notify_outcome" text, "received_at" integer, "late_route" text, "late_reason" text, "fallback_chat_id" text, "fallback_message_id" integer, "fallback_sent_at" integer, "fallback_state" text, "fallback_attempts" integer default 0 not null, "fallback_next_at" integer);

-- index sqlite_autoindex_lead_repeats_1 on lead_repeats
(automatic);

-- index lead_repeats_lead on lead_repeats
CREATE INDEX "lead_repeats_lead" on "lead_repeats" ("lead_id", "created_at");

-- index lead_repeats_unnotified on lead_repeats
CREATE INDEX "lead_repeats_unnotified" on "lead_repeats" ("next_attempt_at") where "notified_at" is null;

-- table rate_events on rate_events
CREATE TABLE "rate_events" ("id" integer primary key autoincrement, "kind" text not null, "key_hash" text not null, "at" integer not null);

-- index rate_events_key on rate_events
CREATE INDEX "rate_events_key" on "rate_events" ("kind", "key_hash", "at");

-- index rate_events_at on rate_events
CREATE INDEX "rate_events_at" on "rate_events" ("kind", "at");

-- table alert_throttles on alert_throttles
CREATE TABLE "alert_throttles" ("key" text primary key, "last_sent_at" integer not null);

-- index sqlite_autoindex_alert_throttles_1 on alert_throttles
(automatic);

-- table settings on settings
CREATE TABLE "settings" ("key" text primary key, "value" text not null, "updated_at" integer not null);

-- index sqlite_autoindex_settings_1 on settings
(automatic);

-- index leads_card_dirty on leads
CREATE INDEX "leads_card_dirty" on "leads" ("card_refresh_next_at") where "card_dirty_at" is not null;

-- index leads_status on leads
CREATE INDEX "leads_status" on "leads" ("status", "created_at");

-- table lead_status_changes on lead_status_changes
CREATE TABLE "lead_status_changes" ("id" integer primary key autoincrement, "lead_id" integer not null references "leads" ("id") on delete cascade, "from_status" text not null, "to_status" text not null, "user_id" integer not null, "user_name" text not null, "at" integer not null);

-- index lead_status_changes_lead on lead_status_changes
CREATE INDEX "lead_status_changes_lead" on "lead_status_changes" ("lead_id", "at");

-- table job_runs on job_runs
CREATE TABLE "job_runs" ("key" text primary key, "at" integer not null);

-- index sqlite_autoindex_job_runs_1 on job_runs
(automatic);

-- table lead_events on lead_events
CREATE TABLE "lead_events" ("id" integer primary key autoincrement, "lead_id" integer not null references "leads" ("id") on delete cascade, "repeat_id" integer, "kind" text not null, "at" integer not null, "detail" text);

-- index lead_events_lead on lead_events
CREATE INDEX "lead_events_lead" on "lead_events" ("lead_id", "id");

-- index leads_fallback_due on leads
CREATE INDEX "leads_fallback_due" on "leads" ("fallback_next_at") where "fallback_state" = 'answer';

-- index lead_repeats_fallback_due on lead_repeats
CREATE INDEX "lead_repeats_fallback_due" on "lead_repeats" ("fallback_next_at") where "fallback_state" = 'answer';
