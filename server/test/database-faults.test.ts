/**
 * PostgreSQL faults with several instances: a submit lock held from outside, connections terminated (checked out,
 * idle, under load), a session frozen inside a transaction, a statement that runs too long, a pool with no free
 * connection. Every instance answers 503 while it cannot store a lead, never 500, never dies, and serves again by
 * itself once the fault is over. PostgreSQL only: SQLite has no connections to lose.
 */
import { sql } from 'kysely';
import { Client } from 'pg';
import { counterValue, lead, NO_RATE_LIMITS, postLead, startServer, type TestServer, tempDir, waitFor } from './harness';
import { describePostgresOnly } from './support/test-database';
import { SUBMIT_LOCK_KEY } from '../src/repositories/submit-runner';

describePostgresOnly('database faults with two instances (PostgreSQL only)', () => {
  const tmp = tempDir();
  let n = 0;
  let servers: TestServer[] = [];
  let admins: Client[] = [];
  afterAll(() => tmp.remove());
  afterEach(async () => {
    await Promise.all(admins.map((c) => c.end().catch(() => undefined)));
    admins = [];
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
  });

  /** Instances on one fresh database. */
  async function instances(count: number, env: Record<string, string> = {}): Promise<TestServer[]> {
    const dbPath = `${tmp.dir}/faults-${++n}.sqlite`;
    const started: TestServer[] = [];
    // One after the other: the first migrates.
    for (let i = 0; i < count; i++) started.push(await startServer({ dbPath, env: { ...NO_RATE_LIMITS, ...env } }));
    servers.push(...started);
    return started;
  }

  /** A session of our own on the instances' database, as an operator's psql would be. */
  async function adminOn(server: TestServer): Promise<Client> {
    const client = new Client({ connectionString: server.config.databaseUrl! });
    client.on('error', () => undefined);
    await client.connect();
    admins.push(client);
    return client;
  }

  /** Terminates every session on the instances' database but the admin's own; how many it ended. */
  async function terminateAll(admin: Client): Promise<number> {
    const { rows } = await admin.query<{ ended: boolean }>(
      "select pg_terminate_backend(pid) as ended from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()",
    );
    return rows.filter((r) => r.ended).length;
  }

  /** Posts until one answers 201 (at most `bound` ms): the instance serves again by itself. */
  async function servesAgain(server: TestServer, bound = 15_000): Promise<number[]> {
    const seen: number[] = [];
    const deadline = Date.now() + bound;
    for (;;) {
      const { status } = await postLead(server, lead());
      seen.push(status);
      if (status === 201) return seen;
      if (Date.now() > deadline) throw new Error(`no 201 within ${bound} ms: ${seen.join(' ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('a submit lock held past the timeout gives 503s, and after its rollback both instances serve again (no poisoned connection)', async () => {
    const [a, b] = await instances(2, { DATABASE_BUSY_TIMEOUT_MS: '300' });
    const admin = await adminOn(a);
    await admin.query('begin');
    await admin.query('select pg_advisory_xact_lock($1)', [SUBMIT_LOCK_KEY]);
    const held = await Promise.all([a, b, a, b].map((s) => postLead(s, lead())));
    expect(held.map((r) => r.status)).toEqual([503, 503, 503, 503]);
    await admin.query('rollback');

    // Every later post on both, and /ready, as before the fault: the pool used to hand the timed-out connection (the
    // most recently released) out again inside its aborted transaction. One after the other, so that no post waits
    // for another's lock past the short bound on a loaded machine.
    for (const server of [a, b]) {
      const answers = [];
      for (let i = 0; i < 15; i++) answers.push(await postLead(server, lead()));
      expect(answers.map((r) => r.status)).toEqual(Array(15).fill(201));
      const ready = await fetch(`${server.url}/ready`);
      expect(ready.status).toBe(200);
    }
  });

  it('a connection that breaks while checked out is logged once and dropped; the process lives and the next query gets a new one', async () => {
    const [a] = await instances(1);
    const admin = await adminOn(a);
    await a.db.db.connection().execute(async (conn) => {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(conn);
      await admin.query('select pg_terminate_backend($1)', [rows[0].pid]);
      // pg emits 'error' on the checked-out connection; with no listener it would end the process.
      await waitFor(() => a.logger.lines.some((l) => l.includes('database connection lost')), 5000, 'the lost connection logged');
    });
    expect(a.logger.lines.filter((l) => l.includes('database connection lost'))).toHaveLength(1);
    expect((await postLead(a, lead())).status).toBe(201);
    expect(a.db.pool!.totalCount).toBeGreaterThan(0);
  });

  it('every backend terminated under load: only 2xx and 503 answers, no dead process, and both instances serve again', async () => {
    const [a, b] = await instances(2);
    const admin = await adminOn(a);
    // Warm the pools, so that idle and checked-out connections both break.
    await Promise.all([a, b].flatMap((s) => Array.from({ length: 4 }, () => postLead(s, lead()))));
    const load = Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        postLead(i % 2 ? a : b, lead()).then(
          (r) => r.status,
          () => 0,
        ),
      ),
    );
    const ended = await terminateAll(admin);
    const statuses = await load;
    expect(ended).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 201 && s !== 200 && s !== 503)).toEqual([]);
    for (const server of [a, b]) {
      await servesAgain(server);
      expect((await fetch(`${server.url}/ready`)).status).toBe(200);
    }
  });

  it('PostgreSQL gone: 503 (and /ready 503), never 500, counted and logged once; back: /ready and cards within 5 s', async () => {
    const [a] = await instances(1, { DATABASE_BUSY_TIMEOUT_MS: '300' });
    const admin = await adminOn(a);
    const name = await currentDatabase(admin);
    await admin.end();
    // From the server's maintenance database: the instance's own refuses new connections, and the ones it had end.
    const root = new Client({ connectionString: process.env.LEADS_TEST_POSTGRES_URL });
    root.on('error', () => undefined);
    await root.connect();
    admins.push(root);
    await root.query(`alter database ${name} with allow_connections false`);
    try {
      await root.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
      const answers = await Promise.all(Array.from({ length: 5 }, () => postLead(a, lead())));
      expect(answers.map((r) => r.status)).toEqual([503, 503, 503, 503, 503]);
      // Counted as the submit's own 503s, in one throttled log line (the secret's lockout read is what failed).
      expect(await counterValue(a, 'leads_submissions_total', { result: 'unavailable' })).toBe(5);
      expect(a.logger.lines.filter((l) => l.includes('submit refused with 503'))).toHaveLength(1);
      expect(a.logger.lines.filter((l) => l.includes('answered 503'))).toEqual([]);
      // Outbox passes keep failing meanwhile (three in a row backed off a minute before).
      for (let i = 0; i < 3; i++) {
        a.clock.advance(60_000);
        await a.outbox.tick();
      }
      expect((await fetch(`${a.url}/ready`)).status).toBe(503);
    } finally {
      await root.query(`alter database ${name} with allow_connections true`);
    }
    await servesAgain(a);
    a.clock.advance(5_000);
    await a.outbox.tick();
    a.clock.advance(1_000);
    expect((await fetch(`${a.url}/ready`)).status).toBe(200);
  });

  describe('bounds a stuck session cannot pass', () => {
    it('statement_timeout: a statement running past DATABASE_STATEMENT_TIMEOUT_MS is cancelled (57014, a storage error)', async () => {
      const [a] = await instances(1, { DATABASE_STATEMENT_TIMEOUT_MS: '200' });
      await expect(sql`select pg_sleep(3)`.execute(a.db.db)).rejects.toMatchObject({ code: '57014' });
      const { rows } = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(a.db.db);
      expect(rows[0].statement_timeout).toBe('200ms');
    });

    it('the default statement_timeout is under the landing’s 5 s', async () => {
      const [a] = await instances(1);
      const { rows } = await sql<{ ms: number }>`select setting::int as ms from pg_settings where name = 'statement_timeout'`.execute(
        a.db.db,
      );
      expect(rows[0].ms).toBeGreaterThan(0);
      expect(rows[0].ms).toBeLessThan(5000);
    });

    it('idle_in_transaction_session_timeout: an instance frozen inside a transaction holding the submit lock loses it, and the other serves again', async () => {
      const [a, b] = await instances(2, { DATABASE_BUSY_TIMEOUT_MS: '200', DATABASE_IDLE_TX_TIMEOUT_MS: '1500' });
      // Instance a takes the submit lock in a transaction and then does nothing, as a frozen process would.
      let locked!: () => void;
      const holding = new Promise<void>((r) => (locked = r));
      const frozen = a.db.db.connection().execute(async (conn) => {
        await sql`begin`.execute(conn);
        await sql`select pg_advisory_xact_lock(${SUBMIT_LOCK_KEY})`.execute(conn);
        locked();
        await new Promise((r) => setTimeout(r, 4000));
        // PostgreSQL ended the session meanwhile: the frozen instance finds it gone.
        return sql`commit`.execute(conn).then(
          () => 'committed',
          () => 'session ended',
        );
      });
      // b asks only once a holds the lock (else b may take it first, on a loaded machine).
      await holding;
      const seen = await servesAgain(b, 10_000);
      expect(seen[0]).toBe(503);
      expect(await frozen).toBe('session ended');
      // And the frozen instance itself serves again with a new connection.
      await servesAgain(a);
    });

    it('TCP keepalive on the server side of every session, and on the pool’s sockets', async () => {
      const [a] = await instances(1);
      const { rows } = await sql<{ tcp_keepalives_idle: string }>`show tcp_keepalives_idle`.execute(a.db.db);
      expect(Number(rows[0].tcp_keepalives_idle)).toBeGreaterThan(0);
      expect(Number(rows[0].tcp_keepalives_idle)).toBeLessThanOrEqual(60);
      expect((a.db.pool as unknown as { options: { keepAlive?: boolean } }).options.keepAlive).toBe(true);
    });

    it('the wait for a pooled connection is bounded by DATABASE_BUSY_TIMEOUT_MS: 503 while the pool is exhausted', async () => {
      const [a] = await instances(1, { DATABASE_POOL_MAX: '1', DATABASE_BUSY_TIMEOUT_MS: '300' });
      let holding = true;
      let releaseHold: () => void = () => undefined;
      const hold = a.db.db.connection().execute(
        () =>
          new Promise<void>((resolve) => {
            releaseHold = resolve;
            // A safety bound well past the busy timeout and under the old 10 s pool wait.
            setTimeout(resolve, 5000);
          }),
      );
      const answer = await postLead(a, lead()).then((r) => ({ status: r.status, whileHeld: holding }));
      holding = false;
      releaseHold();
      await hold;
      expect(answer).toEqual({ status: 503, whileHeld: true });
      await servesAgain(a);
    });
  });

  describe('the submit decision holds the lock for one round trip', () => {
    /** The statements the instance sends to PostgreSQL while `work` runs. */
    async function statementsDuring(work: () => Promise<unknown>): Promise<string[]> {
      const spy = jest.spyOn(Client.prototype, 'query');
      try {
        await work();
        // The caller's wrong-secret lockout is read before the body (shared by the instances), outside the submit lock.
        const calls = spy.mock.calls as unknown as [string, unknown[] | undefined][];
        return calls.filter(([, params]) => !params?.includes('secret_failure')).map(([text]) => text);
      } finally {
        spy.mockRestore();
      }
    }

    it('a new lead, a duplicate and a repeat each take one statement', async () => {
      const [a] = await instances(1);
      const first = lead();
      const created = await statementsDuring(() => postLead(a, first));
      const duplicate = await statementsDuring(() => postLead(a, first));
      const repeat = await statementsDuring(() => postLead(a, { ...lead(), telegram: first.telegram }));
      for (const statements of [created, duplicate, repeat]) {
        expect(statements).toHaveLength(1);
        expect(statements[0]).toMatch(/leads_submit/);
      }
      expect((await postLead(a, first)).body).toMatchObject({ duplicate: true });
    });
  });
});

async function currentDatabase(client: Client): Promise<string> {
  const { rows } = await client.query<{ name: string }>('select current_database() as name');
  return rows[0].name;
}
