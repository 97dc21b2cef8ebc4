import { type ColumnDefinitionBuilder, type Kysely, PostgresAdapter, type RawBuilder, sql, type SqlBool, SqliteAdapter } from 'kysely';

/* Where SQL differs between SQLite and PostgreSQL; the frozen migrations call these, so their SQLite output must not change. */

/** Which database `db` (or a transaction of it) is, by the adapter Kysely's own Migrator consults. */
export function dialectOf<DB>(db: Kysely<DB>): 'sqlite' | 'postgres' {
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return 'postgres';
  if (adapter instanceof SqliteAdapter) return 'sqlite';
  throw new Error(`unsupported database: ${adapter.constructor.name} (SQLite or PostgreSQL)`);
}

/** A 64-bit integer column (times, ids, Telegram ids): SQLite's `integer` is, PostgreSQL's needs `bigint`. */
export function int64(db: Kysely<unknown>): 'integer' | 'bigint' {
  return dialectOf(db) === 'postgres' ? 'bigint' : 'integer';
}

/** The auto-increment primary key of an `int64(db)` column, ids never reused (explicit ids still insertable on PostgreSQL). */
export function autoIncrementPrimaryKey(db: Kysely<unknown>): (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder {
  const postgres = dialectOf(db) === 'postgres';
  return (column) => (postgres ? column.generatedByDefaultAsIdentity().primaryKey() : column.primaryKey().autoIncrement());
}

/** `%part%` for LIKE with `\` as the escape character: the part's own `%`, `_` and `\` match themselves. */
export const likeContains = (part: string) => `%${part.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** A regular expression matching `part` in any case, letter by letter (`орлова` → `[оО][рР]…`): no locale, no call per row. */
function anyCasePattern(part: string): string {
  return [...part]
    .map((c) => {
      const [lower, upper] = [c.toLowerCase(), c.toUpperCase()];
      if (lower !== upper && [...lower].length === 1 && [...upper].length === 1) return `[${lower}${upper}]`;
      return c.replace(/[\\^$.|?*+()[\]{}]/g, (m) => `\\${m}`);
    })
    .join('');
}

/**
 * A case-insensitive "contains" on a text column, `part` lower-cased already: SQLite's `unicode_lower` (database.ts),
 * PostgreSQL's regular expression (its `lower` folds only ASCII under the C locale, and costs per row).
 */
export function containsAnyCase<DB>(db: Kysely<DB>, column: string, part: string): RawBuilder<SqlBool> {
  if (dialectOf(db) === 'sqlite') return sql<SqlBool>`unicode_lower(${sql.ref(column)}) like ${likeContains(part)} escape '\\'`;
  return sql<SqlBool>`${sql.ref(column)} ~ ${anyCasePattern(part)}`;
}

/** A case-insensitive "is one of" on a text column, `values` lower-cased already (false for none), as containsAnyCase. */
export function equalsAnyCase<DB>(db: Kysely<DB>, column: string, values: readonly string[]): RawBuilder<SqlBool> {
  if (values.length === 0) return sql<SqlBool>`1 = 0`;
  if (dialectOf(db) === 'sqlite') return sql<SqlBool>`unicode_lower(${sql.ref(column)}) in (${sql.join(values)})`;
  return sql<SqlBool>`${sql.ref(column)} ~ ${`^(?:${values.map(anyCasePattern).join('|')})$`}`;
}
