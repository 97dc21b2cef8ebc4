import { sql } from 'kysely';
import type { DatabaseHandle } from '../database/database.module';
import { isStorageError } from '../database/write-health';
import { SUBMIT_LOCK_KEY, type SubmitPlan, SubmitRunner, type SubmitVerdict, type Waiting } from './submit-runner';

/**
 * PostgreSQL's submit runner, with group commit: the decision is the server-side function `leads_decide` (migration
 * 0023), run by `leads_submit_batch(lock_key, plans)` over every plan that arrived while the instance's previous call
 * was in flight — the submit lock taken once, the plans decided in order, each seeing the ones before it (limits,
 * duplicates), one commit, the verdicts in order. One call at a time per instance: one round trip, one lock
 * acquisition and one commit (one WAL flush) per batch instead of per decision (docs/performance.md, PostgreSQL per
 * lead).
 *
 * One statement outside BEGIN is a transaction of its own, so the advisory lock the function takes first (waiting at
 * most DATABASE_BUSY_TIMEOUT_MS, the sessions' `lock_timeout`, then 55P03, a storage error: 503), and every lock after
 * it, is released with its answer, whatever happens — no BEGIN or COMMIT to send, and no round trip while it is held.
 * Each statement of a decision sees every decision committed before the lock was granted (READ COMMITTED) and the
 * batch's own decisions before it.
 *
 * A failed call stored nothing of its batch. A storage error fails every plan of it with that error (503 each, as
 * alone). Any other error (a decision the database refuses: a bug, a constraint) would otherwise fail its neighbours
 * too: the batch's plans are then decided again one call each, so only the plan at fault fails.
 */
export class PostgresSubmitRunner extends SubmitRunner {
  /** Calls of `leads_submit_batch` so far, failed ones too, and the decisions they held (tests read them). */
  readonly stats = { calls: 0, decisions: 0 };

  constructor(private readonly database: DatabaseHandle) {
    super();
  }

  protected async decideBatch(batch: Waiting[]): Promise<void> {
    let verdicts: SubmitVerdict[];
    try {
      verdicts = await this.call(batch.map((w) => w.plan));
    } catch (err) {
      if (batch.length === 1 || isStorageError(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      for (const w of batch) {
        try {
          w.resolve((await this.call([w.plan]))[0]);
        } catch (alone) {
          w.reject(alone);
        }
      }
      return;
    }
    batch.forEach((w, i) => w.resolve(verdicts[i]));
  }

  private async call(plans: SubmitPlan[]): Promise<SubmitVerdict[]> {
    this.stats.calls += 1;
    this.stats.decisions += plans.length;
    const { rows } = await sql<{
      verdicts: SubmitVerdict[];
    }>`select leads_submit_batch(${SUBMIT_LOCK_KEY}, ${JSON.stringify(plans)}::jsonb) as verdicts`.execute(this.database.db);
    return rows[0].verdicts;
  }
}
