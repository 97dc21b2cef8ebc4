/**
 * Erasure that reaches late replays, the server's part (docs/decisions.md, "Erased contacts are remembered, hashed,
 * against late replays"): `/stickers_forget` (by contact or by number) and `npm run leads -- forget` record what they
 * erased as keyed hashes of the contacts in `erased_contacts`, with the erasure time; the submit decision asks
 * whether a submission's contacts were erased at or after its visitor time.
 * No contact is stored in the clear; the rows are pruned once no late replay can precede them.
 */
import { Client } from 'pg';
import { LATE_MAX_AGE_MS } from '@stickers/shared';
import { AnonymisationService } from '../src/anonymisation/anonymisation.service';
import { ContactHasher } from '../src/anonymisation/contact-hasher';
import { forget } from '../src/cli/ops';
import { migrateToLatest, openDatabase } from '../src/database/database';
import { HousekeepingService } from '../src/housekeeping/housekeeping.service';
import { LeadErasureRepository } from '../src/repositories/lead-erasure.repository';
import { SUBMIT_LOCK_KEY } from '../src/repositories/submit-runner';
import { FakeClock, LEADS_CHAT, SALT, lead, memberActions, sandboxSuite, submitLead, type TestServer } from './harness';
import { describePostgresOnly, sqlRows } from './support/test-database';
import { captureConsole } from './support/console';

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const suite = sandboxSuite();
const { sandbox } = suite;
const { command } = memberActions(sandbox);

const hasher = ContactHasher.keyed(SALT);

const boot = (env: Record<string, string> = {}): Promise<TestServer> => suite.boot({ clock: new FakeClock(), polling: true, env });

const recorded = (server: TestServer) =>
  sqlRows<{ contact_hash: string; erased_at: number }>(
    server.db,
    'select contact_hash, erased_at from erased_contacts order by contact_hash',
  );
const sorted = (hashes: string[]) => [...hashes].sort();
const erasedSince = async (server: TestServer, hashes: string[], at: number) =>
  (await recorded(server)).some((r) => hashes.includes(r.contact_hash) && Number(r.erased_at) >= at);

describe('ContactHasher', () => {
  it('one hash per account and per phone: the username without @ in any case, the phone as the form stores it', () => {
    expect(hasher.telegram('@Victim_One')).toBe(hasher.telegram('victim_one'));
    expect(hasher.telegram('@Victim_One')).toMatch(/^[0-9a-f]{64}$/);
    expect(hasher.telegram('@victim_two')).not.toBe(hasher.telegram('@victim_one'));
    expect(hasher.phone('+79994510123')).not.toBe(hasher.phone('+79994510124'));
    expect(hasher.hashes({ telegrams: ['@Victim_One', '@victim_one', null], phones: ['+79994510123', undefined] })).toEqual([
      hasher.telegram('victim_one'),
      hasher.phone('+79994510123'),
    ]);
  });

  it('keyed with LEADS_IP_SALT, in a namespace of its own: no plain hash of the contact, no address hash', async () => {
    const { createHash, createHmac } = await import('node:crypto');
    expect(ContactHasher.keyed('another-salt').phone('+79994510123')).not.toBe(hasher.phone('+79994510123'));
    expect(hasher.phone('+79994510123')).not.toBe(createHash('sha256').update('+79994510123').digest('hex'));
    expect(hasher.phone('+79994510123')).not.toBe(createHmac('sha256', SALT).update('+79994510123').digest('hex'));
    expect(hasher.telegram('victim_one')).not.toBe(hasher.phone('victim_one'));
  });
});

describe('the erasures recorded for late replays', () => {
  it('/stickers_forget @name records the hashes of every contact of the erased leads, no contact itself, and answers erasedSince', async () => {
    const server = await boot();
    const id = await submitLead(server, { telegram: '@Victim_One', phone: '+79994510123' });
    server.clock.advance(MIN);
    // A repeat that came with another phone: that phone is the person's too.
    await submitLead(server, { telegram: '@victim_one', phone: '+79994510999' });
    const other = await submitLead(server, lead());
    server.clock.advance(10 * MIN);
    const erasedAt = server.clock.now();
    expect(await command(LEADS_CHAT, '/stickers_forget @victim_one')).toContain(`(#${id})`);

    const rows = await recorded(server);
    expect(rows.map((r) => r.contact_hash)).toEqual(
      sorted([hasher.telegram('victim_one'), hasher.phone('+79994510123'), hasher.phone('+79994510999')]),
    );
    expect(rows.every((r) => r.erased_at === erasedAt)).toBe(true);
    expect(JSON.stringify(rows)).not.toMatch(/victim|7999451/i);

    // A late replay sent 10 minutes before the erasure: erased after it (by its username, or by its phone alone).
    const submittedAt = erasedAt - 10 * MIN;
    expect(await erasedSince(server, [hasher.telegram('@VICTIM_ONE'), hasher.phone('+70000000000')], submittedAt)).toBe(true);
    expect(await erasedSince(server, [hasher.telegram('@someone_else'), hasher.phone('+79994510999')], submittedAt)).toBe(true);
    expect(await erasedSince(server, [hasher.telegram('@victim_one')], erasedAt)).toBe(true);
    // Sent after the erasure: a new request of hers, stored as any other. Someone else's: never.
    expect(await erasedSince(server, [hasher.telegram('@victim_one')], erasedAt + 1)).toBe(false);
    expect(await erasedSince(server, [hasher.telegram('@someone_else'), hasher.phone('+70000000000')], submittedAt)).toBe(false);
    expect(await erasedSince(server, [], submittedAt)).toBe(false);
    expect((await sqlRows(server.db, 'select anonymised_at from leads where id = ?', other))[0]).toEqual({ anonymised_at: null });

    // Erased again later: the later time is kept.
    server.clock.advance(DAY);
    expect(await command(LEADS_CHAT, '/stickers_forget @victim_one')).toBe('Заявок с таким контактом не найдено: никто не обезличен.');
    expect(await recorded(server)).toContainEqual({ contact_hash: hasher.telegram('victim_one'), erased_at: server.clock.now() });
  });

  it('/stickers_forget +7… records the phone even when no lead has it; by number records the lead’s contacts; retention records nothing', async () => {
    const server = await boot({ LEADS_RETENTION_DAYS: '1' });
    expect(await command(LEADS_CHAT, '/stickers_forget +7 999 451-00-00')).toBe('Заявок с таким контактом не найдено: никто не обезличен.');
    expect((await recorded(server)).map((r) => r.contact_hash)).toEqual([hasher.phone('+79994510000')]);

    const id = await submitLead(server, { telegram: '@by_number', phone: '+79994510001' });
    const old = await submitLead(server, { telegram: '@by_retention', phone: '+79994510002' });
    expect(await command(LEADS_CHAT, `/stickers_forget ${id}`)).toContain(`Заявка #${id} обезличена`);
    server.clock.advance(2 * DAY);
    expect((await server.app.get(HousekeepingService).run()).anonymised).toBe(1);
    expect(
      (await sqlRows<{ anonymised_at: number | null }>(server.db, 'select anonymised_at from leads where id = ?', old))[0].anonymised_at,
    ).not.toBeNull();
    expect((await recorded(server)).map((r) => r.contact_hash)).toEqual(
      sorted([hasher.phone('+79994510000'), hasher.telegram('by_number'), hasher.phone('+79994510001')]),
    );
  });

  it('npm run leads -- forget records as the server does, and refuses without LEADS_IP_SALT', async () => {
    const server = await boot();
    await submitLead(server, { telegram: '@cli_victim', phone: '+79994510003' });
    const location = server.config.databaseUrl ?? server.config.databasePath;
    const unsalted = await captureConsole(() => forget(location, '--telegram', 'cli_victim', server.clock.now(), undefined));
    expect(unsalted.result).toBe(2);
    expect(unsalted.error.join(' ')).toContain('LEADS_IP_SALT must be set');
    expect(await recorded(server)).toEqual([]);
    expect(await captureConsole(() => forget(location, '--telegram', 'CLI_victim', server.clock.now(), SALT))).toMatchObject({
      result: 0,
      error: [],
    });
    expect((await recorded(server)).map((r) => r.contact_hash)).toEqual(
      sorted([hasher.telegram('cli_victim'), hasher.phone('+79994510003')]),
    );
    expect(await erasedSince(server, [hasher.telegram('@cli_victim')], server.clock.now() - MIN)).toBe(true);
  });

  it('housekeeping prunes an erasure once a late replay can no longer precede it (LATE_MAX_AGE_MS)', async () => {
    const server = await boot();
    expect(await command(LEADS_CHAT, '/stickers_forget @pruned_one')).toContain('никто не обезличен');
    const housekeeping = server.app.get(HousekeepingService);
    server.clock.advance(LATE_MAX_AGE_MS);
    await housekeeping.prune();
    expect(await recorded(server)).toHaveLength(1);
    server.clock.advance(1);
    await housekeeping.prune();
    expect(await recorded(server)).toEqual([]);
  });
});

describe('LeadErasureRepository.sqliteErasedSince (the SQLite decision runner)', () => {
  it('answers whether a contact was erased at or after a time, synchronously, from one prepared statement', async () => {
    const { db, sqlite } = openDatabase(':memory:');
    try {
      await migrateToLatest(db);
      const repo = new LeadErasureRepository(db);
      await db.transaction().execute((trx) => repo.recordErased([hasher.telegram('a_person'), hasher.phone('+79994510004')], 1000, trx));
      const erasedSince = LeadErasureRepository.sqliteErasedSince(sqlite);
      for (const [hashes, at, expected] of [
        [[hasher.telegram('@A_Person'), hasher.phone('+70000000000')], 999, true],
        [[hasher.phone('+79994510004')], 1000, true],
        [[hasher.telegram('a_person')], 1001, false],
        [[hasher.telegram('b_person')], 0, false],
        [[], 0, false],
      ] as const) {
        expect(erasedSince(hashes, at)).toBe(expected);
      }
    } finally {
      await db.destroy();
    }
  });
});

/** Waits until the (asynchronous) probe holds: an observable event, never a sleep then an assertion. */
async function until(probe: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the erasure to wait for the submit lock');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describePostgresOnly('an erasure and the submit decisions on PostgreSQL', () => {
  it('the erasing transaction takes the submit lock first: it waits for a decision in progress, and decisions wait for it', async () => {
    const server = await boot();
    const holder = new Client({ connectionString: server.config.databaseUrl! });
    await holder.connect();
    try {
      // A submit decision in progress holds the lock (here: another session holding it).
      await holder.query('select pg_advisory_lock($1)', [SUBMIT_LOCK_KEY]);
      const erasing = server.app.get(AnonymisationService).forgetContact({ kind: 'phone', phone: '+79994510005' });
      await until(async () => (await holder.query("select 1 from pg_locks where locktype = 'advisory' and not granted")).rowCount === 1);
      expect(await recorded(server)).toEqual([]);
      await holder.query('select pg_advisory_unlock($1)', [SUBMIT_LOCK_KEY]);
      expect(await erasing).toEqual([]);
      expect((await recorded(server)).map((r) => r.contact_hash)).toEqual([hasher.phone('+79994510005')]);
    } finally {
      await holder.end();
    }
  });
});
