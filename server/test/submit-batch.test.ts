/**
 * Submit decisions asked for together: each decided in order, seeing the ones before it, whichever database decides
 * them (SQLite: one group commit; PostgreSQL: one call of `leads_submit_batch`, checked here by the runner's count of
 * calls), and a batch the database fails fails every decision of it alike.
 */
import { checkSubmission } from '../src/leads/leads.dto';
import { LeadsService } from '../src/leads/leads.service';
import type { PostgresSubmitRunner } from '../src/repositories/postgres-submit.runner';
import { SubmitRunner, type SubmitPlan } from '../src/repositories/submit-runner';
import { lead, startServer, tempDir, type TestServer } from './harness';
import { planOf } from './support/submit-plans';
import { onPostgres, READONLY_CODE, refuseWrites, sqlRow } from './support/test-database';

const NOW = 1_796_000_000_000;

const tmp = tempDir();
let files = 0;
let server: TestServer;
let runner: SubmitRunner;

beforeEach(async () => {
  server = await startServer({
    dbPath: `${tmp.dir}/batch-${(files += 1)}.sqlite`,
    env: { LEADS_IP_LIMIT: '5', LEADS_HOURLY_LIMIT: '100000' },
  });
  runner = server.app.get(SubmitRunner);
});
afterEach(() => server.close());
afterAll(() => tmp.remove());

/** The calls of `leads_submit_batch` the PostgreSQL runner made so far (null on SQLite). */
const callsOf = () => (onPostgres ? (runner as PostgresSubmitRunner).stats.calls : null);

/** Submits every plan in the same turn of the event loop; each plan's verdict, or `refused: <code>`. */
const together = (plans: SubmitPlan[]) =>
  Promise.all(
    plans.map((p) =>
      runner.submit(p).then(
        (v) => v,
        (err: { code?: string; message?: string }) => `refused: ${err.code ?? err.message}`,
      ),
    ),
  );

it('30 plans of one visitor together: the first 5 are leads, the other 25 over its limit — in one call on PostgreSQL', async () => {
  const before = callsOf();
  const verdicts = await together(Array.from({ length: 30 }, (_, i) => planOf(NOW + i, { ipHash: 'one visitor', limits: { visitor: 5 } })));
  expect(verdicts.map((v) => (typeof v === 'string' ? v : v.kind))).toEqual([...Array(5).fill('created'), ...Array(25).fill('limited')]);
  expect(await sqlRow(server.db, 'select count(*) as n from leads')).toEqual({ n: 5 });
  if (before !== null) expect(callsOf()! - before).toBe(1);
});

it('the same request_id twice together: one new lead, then its duplicate', async () => {
  const plan = planOf(NOW);
  const before = callsOf();
  const [first, second] = await together([plan, { ...planOf(NOW + 1), request_id: plan.request_id }]);
  expect(first).toEqual({ kind: 'created', lead_number: expect.any(Number) });
  expect(second).toEqual({
    kind: 'duplicate',
    lead_number: (first as { lead_number: number }).lead_number,
    repeat: false,
    fallback_noted: false,
  });
  expect(await sqlRow(server.db, 'select count(*) as n from leads')).toEqual({ n: 1 });
  if (before !== null) expect(callsOf()! - before).toBe(1);
});

it('a batch the database refuses: every plan of it fails with the storage error, nothing stored, and POST /leads answers 503', async () => {
  await refuseWrites(server.db);
  const before = callsOf();
  const verdicts = await together([planOf(NOW), planOf(NOW + 1), planOf(NOW + 2)]);
  expect(verdicts).toEqual(Array(3).fill(`refused: ${READONLY_CODE}`));
  if (before !== null) expect(callsOf()! - before).toBe(1);
  expect(await sqlRow(server.db, 'select count(*) as n from leads')).toEqual({ n: 0 });

  const service = server.app.get(LeadsService);
  const checked = [lead(), lead()].map((body) => checkSubmission(body, server.config.leads, Date.now()));
  if (!checked.every((c) => c.ok)) throw new Error('the test leads must pass the body rules');
  const answers = await Promise.all(checked.map((c) => service.submit(c, '192.0.2.1')));
  expect(answers.map((a) => a.kind)).toEqual(['unavailable', 'unavailable']);
});

it('a plan the database refuses (not a storage error) fails alone: the others of its batch are decided as alone', async () => {
  const stored = planOf(NOW);
  await runner.submit(stored);
  // A fresh request_id whose row carries a stored one: past the decision's own check, the unique index refuses it.
  const refused = { ...planOf(NOW + 1), lead: { ...planOf(NOW + 1).lead, request_id: stored.request_id } };
  const verdicts = await together([planOf(NOW + 2), refused, planOf(NOW + 3)]);
  expect(verdicts.map((v) => (typeof v === 'string' ? v : v.kind))).toEqual([
    'created',
    `refused: ${onPostgres ? '23505' : 'SQLITE_CONSTRAINT_UNIQUE'}`,
    'created',
  ]);
  expect(await sqlRow(server.db, 'select count(*) as n from leads')).toEqual({ n: 3 });
});
