import type { Migration } from 'kysely';
import * as initial from './2026-11-29-0001-initial';

/** Every migration, by date-prefixed name. Append only. */
export const MIGRATIONS: Record<string, Migration> = {
  '2026-11-29-0001-initial': initial,
};
