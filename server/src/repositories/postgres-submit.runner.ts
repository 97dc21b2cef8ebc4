import { sql } from 'kysely';
import type { DatabaseHandle } from '../database/database.module';
import { SUBMIT_LOCK_KEY, type SubmitPlan, SubmitRunner, type SubmitVerdict } from './submit-runner';

/**
 * PostgreSQL's submit runner: the decision is the server-side function `leads_submit` (migration 0017), called once
 * with the plan — one statement, one round trip, holding the submit lock only while it runs.
 *
 * One statement outside BEGIN is a transaction of its own, so the advisory lock the function takes first (waiting at
 * most DATABASE_BUSY_TIMEOUT_MS, the sessions' `lock_timeout`, then 55P03, a storage error: 503), and every lock after
 * it, is released with its answer, whatever happens — no BEGIN or COMMIT to send, and no round trip while it is held
 * (docs/performance.md, PostgreSQL). Each later statement of the function sees every decision committed before the
 * lock was granted (READ COMMITTED).
 */
export class PostgresSubmitRunner extends SubmitRunner {
  constructor(private readonly database: DatabaseHandle) {
    super();
  }

  async submit(plan: SubmitPlan): Promise<SubmitVerdict> {
    const call = { ...plan, lock_key: SUBMIT_LOCK_KEY };
    const { rows } = await sql<{ verdict: SubmitVerdict }>`select leads_submit(${JSON.stringify(call)}::jsonb) as verdict`.execute(
      this.database.db,
    );
    return rows[0].verdict;
  }
}
