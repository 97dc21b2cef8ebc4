import type { Kysely } from 'kysely';
import { int64 } from '../dialect-sql';

// Frozen once released: a change to the schema is a new migration.
export async function up(db: Kysely<any>): Promise<void> {
  // Several server instances on one database: a lease names the one instance that does a job for now
  // (the outbox's passes, housekeeping, long polling), until `until` (ms since the epoch) unless it renews it. An
  // instance that dies stops renewing, and another takes the job when the lease runs out.
  await db.schema
    .createTable('leases')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('until', int64(db), (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('leases').execute();
}
