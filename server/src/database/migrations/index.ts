import type { Migration } from 'kysely';
import * as initial from './2026-11-29-0001-initial';
import * as outbox from './2026-11-29-0002-outbox';

/** Every migration, by date-prefixed name. Append only. */
export const MIGRATIONS: Record<string, Migration> = {
  '2026-11-29-0001-initial': initial,
  '2026-11-29-0002-outbox': outbox,
};
