import { type Kysely, sql } from 'kysely';
import { int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.
export async function up(db: Kysely<any>): Promise<void> {
  // Accepted submissions counted per minute, written in the same transaction as each `rate_events` row of
  // kind 'accepted': the hourly limit reads at most 61 of these and one minute of events, however high the limit, instead
  // of up to `limit` events of the last hour.
  await db.schema
    .createTable('rate_minutes')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('minute', int64(db), (c) => c.notNull())
    .addColumn('n', int64(db), (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_minutes_pk', ['kind', 'minute'])
    .execute();
  // The counts of the events already stored (integer division on both databases: both operands are integers).
  await sql`insert into rate_minutes (kind, minute, n) select kind, at / 60000, count(*) from rate_events where kind = 'accepted' group by kind, at / 60000`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_minutes').execute();
}
