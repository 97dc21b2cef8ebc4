import type { Database as SqliteDatabase, Statement } from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, type Driver, SqliteDialect, type SqliteDialectConfig, SqliteDriver } from 'kysely';

/**
 * Kysely's SQLite driver opens transactions with a plain `begin`, which takes the write lock only at the first
 * write: a second writer can slip in between our reads and writes. Every transaction here is `begin immediate`,
 * as the seed's `db.lead_submit` requires (STACK.md, "BEGIN IMMEDIATE through Kysely").
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly dialectConfig: SqliteDialectConfig) {
    super(dialectConfig);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.dialectConfig);
  }
}

/**
 * Kysely prepares every statement anew. Our queries are a small fixed set, so preparing each once and reusing it
 * saves the SQLite compile on the hot path (`POST /leads`). Bounded, in case dynamic SQL ever creeps in.
 */
export function withStatementCache(db: SqliteDatabase, max = 500): SqliteDatabase {
  const cache = new Map<string, Statement>();
  const prepare = (sql: string): Statement => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      cache.set(sql, stmt);
    }
    return stmt;
  };
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'prepare') return prepare;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
