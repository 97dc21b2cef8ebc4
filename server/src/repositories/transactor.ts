import { Injectable } from '@nestjs/common';
import { type SelectQueryBuilder, sql, type Transaction } from 'kysely';
import { InjectDb } from '../database/database.module';
import type { LeadsDb } from '../database/database';
import type { Database } from '../database/schema';

/** An open transaction, handed by a service from the Transactor to the repository methods that take one. */
export type Tx = Transaction<Database>;

/** Lets a service make two repositories' writes one commit: their methods take an optional `trx`. */
@Injectable()
export class Transactor {
  constructor(@InjectDb() private readonly db: LeadsDb) {}

  run<T>(work: (trx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }
}

/** How many rows `query` finds (PostgreSQL's `bigint` count comes as a number: database.ts parses int8). */
export async function countRows<DB, TB extends keyof DB>(query: SelectQueryBuilder<DB, TB, object>): Promise<number> {
  const row = await query.select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
  return (row as unknown as { n: number }).n;
}
