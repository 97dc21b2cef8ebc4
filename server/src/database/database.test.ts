import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrateToLatest, openDatabase } from './database';

/** The files this process holds open that SQLite made for temporary data (`etilqs_…`, deleted once open). */
const temporaryFiles = () =>
  readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return ''; // closed meanwhile (readdir's own descriptor)
      }
    })
    .filter((target) => /etilqs_/.test(target));

describe('openDatabase', () => {
  it("keeps a statement's journal in memory: a write of many pages inside a savepoint (a submit's decision) opens no temporary file", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'leads-temp-store-'));
    const { db, sqlite } = openDatabase(join(dir, 'leads.sqlite'));
    try {
      await migrateToLatest(db);
      // 40 leads of a 3,000-character comment each, a page of its own each.
      sqlite
        .prepare(
          `with recursive n(i) as (select 1 union all select i + 1 from n where i < 40)
           insert into leads (request_id, comment, created_at) select 'lead-' || i, printf('%.3000c', 'x'), i from n`,
        )
        .run();
      const before = temporaryFiles();
      // One statement that rewrites them all inside a savepoint: over 64 KiB of page images in its journal, the most
      // SQLite keeps in memory before it spills them to a temporary file (unless told to keep them in memory).
      let during: string[] = [];
      sqlite.transaction(() =>
        sqlite.transaction(() => {
          sqlite.prepare(`update leads set comment = printf('%.3000c', 'y')`).run();
          during = temporaryFiles();
        })(),
      )();
      expect(sqlite.prepare('select count(*) as n from leads where comment like ?').get('yyy%')).toEqual({ n: 40 });
      expect(during).toEqual(before);
    } finally {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
