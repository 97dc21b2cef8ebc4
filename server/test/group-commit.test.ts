/**
 * Group commit: submit decisions asked for in the same turn of the event loop share one SQLite commit, each
 * decided exactly as alone, in order. SQLite only (its commits, its savepoints): PostgreSQL's group commit, one call of
 * `leads_submit_batch`, is test/submit-batch.test.ts's.
 */
import { checkSubmission } from '../src/leads/leads.dto';
import { LeadsService } from '../src/leads/leads.service';
import type { SqliteSubmitRunner } from '../src/repositories/sqlite-submit.runner';
import { SubmitRunner } from '../src/repositories/submit-runner';
import { lead, startServer, type TestServer, tempDir } from './harness';
import { planOf } from './support/submit-plans';
import { describeSqliteOnly, sqlRow, sqlRun } from './support/test-database';

describeSqliteOnly('group commit of submit decisions (SQLite only: its commits and savepoints)', () => {
  const tmp = tempDir();
  let n = 0;
  const servers: TestServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    tmp.remove();
  });

  async function boot(env: Record<string, string>) {
    const server = await startServer({ dbPath: `${tmp.dir}/group-${++n}.sqlite`, env });
    servers.push(server);
    const service = server.app.get(LeadsService);
    // A body as POST /leads takes it: checked by its rules (LeadBodyPipe's), then submitted; a refused one never reaches the service.
    const submit = async (body: Record<string, unknown>) => {
      const checked = checkSubmission(body, server.config.leads, Date.now());
      return checked.ok ? service.submit(checked, '192.0.2.1') : { kind: 'invalid', errors: checked.errors };
    };
    return { server, submit, repository: server.app.get<SubmitRunner, SqliteSubmitRunner>(SubmitRunner) };
  }

  /**
   * A mixed batch: new leads, a duplicate of one of them, a repeat (same phone), a visitor over its limit of 2, an
   * invalid body, and between them a decision the database refuses (a request_id stored already, past the decision's
   * own check: the unique index).
   */
  function mixedBatch() {
    const first = lead({ client_ip: '203.0.113.1' });
    const phone = lead({ client_ip: '203.0.113.2' }).phone as string;
    return [
      first,
      { ...first },
      lead({ client_ip: '203.0.113.2', phone }),
      'refused by the database',
      lead({ client_ip: '203.0.113.3', phone }),
      lead({ client_ip: '203.0.113.9' }),
      lead({ client_ip: '203.0.113.9' }),
      lead({ client_ip: '203.0.113.9' }),
      { ...lead(), phone: 'not a phone' },
      lead({ client_ip: '203.0.113.4' }),
    ] as const;
  }

  /** A fresh request_id whose lead row carries `storedRequestId`: past the decision's own check, the unique index refuses it. */
  function refusedPlan(storedRequestId: string) {
    const plan = planOf(Date.now());
    return { ...plan, lead: { ...plan.lead, request_id: storedRequestId } };
  }

  async function runAll(
    submit: (body: Record<string, unknown>) => Promise<unknown>,
    repository: SqliteSubmitRunner,
    batch: ReturnType<typeof mixedBatch>,
    together: boolean,
  ): Promise<unknown[]> {
    const one = (item: (typeof batch)[number]): Promise<unknown> =>
      typeof item === 'string'
        ? repository.submit(refusedPlan(batch[0].request_id as string)).then(
            () => 'stored',
            (err: { code?: string; message?: string }) => `refused: ${err.code ?? err.message}`,
          )
        : submit(item);
    if (together) return Promise.all(batch.map(one));
    const answers: unknown[] = [];
    for (const item of batch) answers.push(await one(item));
    return answers;
  }

  it('decisions of one turn share one commit, and each gets the answer it would get alone', async () => {
    const env = { LEADS_IP_LIMIT: '2', LEADS_HOURLY_LIMIT: '100000' };
    const batch = mixedBatch();
    const alone = await boot(env);
    const oneByOne = await runAll(alone.submit, alone.repository, batch, false);
    expect(alone.repository.stats.commits).toBe(batch.length - 1); // the invalid body never reaches the database

    const grouped = await boot(env);
    const before = { ...grouped.repository.stats };
    const together = await runAll(grouped.submit, grouped.repository, batch, true);
    expect(grouped.repository.stats.commits - before.commits).toBe(1);
    expect(grouped.repository.stats.decisions - before.decisions).toBe(batch.length - 1);

    expect(together).toEqual(oneByOne);
    expect(together.map((a) => (typeof a === 'string' ? a : (a as { kind: string }).kind))).toEqual([
      'created',
      'duplicate',
      'created',
      'refused: SQLITE_CONSTRAINT_UNIQUE',
      'repeat',
      'created',
      'created',
      'limited',
      'invalid',
      'created',
    ]);
    // The refused decision was rolled back alone: every other lead is stored.
    expect(await sqlRow(grouped.server.db, 'select count(*) as n from leads')).toEqual({ n: 5 });
    expect(await sqlRow(grouped.server.db, 'select count(*) as n from lead_repeats')).toEqual({ n: 1 });
  });

  it('a batch is bounded: more decisions than fit in one commit take more commits, none lost', async () => {
    const { submit, repository, server } = await boot({ LEADS_IP_LIMIT: '100000', LEADS_HOURLY_LIMIT: '100000' });
    const before = repository.stats.commits;
    const answers = await Promise.all(Array.from({ length: 150 }, () => submit(lead())));
    expect(answers.every((a) => a.kind === 'created')).toBe(true);
    expect(repository.stats.commits - before).toBe(3); // 64 + 64 + 22
    expect(await sqlRow(server.db, 'select count(*) as n from leads')).toEqual({ n: 150 });
  });

  it("writes a new lead's updated_at in its insert (the latest of its times), not through the insert trigger's rewrite", async () => {
    const { submit, server } = await boot({});
    // Without the trigger, only the insert itself can set it.
    await sqlRun(server.db, 'drop trigger lead_updated_new');
    const answer = await submit(lead());
    expect(answer.kind).toBe('created');
    const row = await sqlRow<{ created_at: number; received_at: number | null; updated_at: number }>(
      server.db,
      'select created_at, received_at, updated_at from leads',
    );
    expect(row?.updated_at).toBe(Math.max(row!.created_at, row!.received_at ?? 0));
    expect(row?.updated_at).toBeGreaterThan(0);
  });
});
