import type { TestPostgres } from './support/postgres';

const KEY = Symbol.for('stickers-leads.jest-postgres');

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { [KEY]?: TestPostgres })[KEY]?.stop();
}
