import { sql } from 'kysely';
import { isStorageError } from '../database/write-health';
import { SUBMIT_LOCK_KEY, type SubmitPlan, SubmitRunner, type SubmitVerdict, type Waiting } from './submit-runner';

/**
 * PostgreSQL's submit runner: one statement `leads_submit_batch(lock_key, plans)` per batch (the lock taken once and
 * held across no round trip, the plans decided in order, one commit). A failed call stored nothing: a storage error
 * fails every plan; any other has them decided again one call each, so only the plan at fault fails.
 */
export class PostgresSubmitRunner extends SubmitRunner {
  /** Calls of `leads_submit_batch` so far, failed ones too, and the decisions they held (tests read them). */
  readonly stats = { calls: 0, decisions: 0 };

  protected async decideBatch(batch: Waiting[]): Promise<void> {
    let verdicts: SubmitVerdict[];
    try {
      verdicts = await this.call(batch.map((w) => w.plan));
    } catch (err) {
      if (batch.length === 1 || isStorageError(err)) throw err;
      for (const w of batch) await this.call([w.plan]).then(([verdict]) => w.resolve(verdict), w.reject);
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
