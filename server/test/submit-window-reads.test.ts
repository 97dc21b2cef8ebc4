/**
 * PostgreSQL: the decision's reads of a window — the visitor's limit (rate_events) and the repeat's lead (leads) — stay
 * on their (key, time) indexes after the tables grew, whatever the tables held when the connection first ran the
 * decision (plpgsql keeps a generic plan from a statement's sixth call on). SQLite plans each prepared statement with
 * its values: nothing to check there.
 */
import { Client } from 'pg';
import { SUBMIT_LOCK_KEY, type SubmitPlan } from '../src/repositories/submit-runner';
import { startServer, tempDir, type TestServer } from './harness';
import { planOf } from './support/submit-plans';
import { itPostgresOnly, postgresDatabaseFor } from './support/test-database';

const NOW = 1_796_000_000_000;
const tmp = tempDir();
let server: TestServer | undefined;
let client: Client | undefined;
afterAll(async () => {
  await client?.end();
  await server?.close();
  tmp.remove();
});

itPostgresOnly(
  'after the windows filled, a decision reads the visitor’s events and the contact’s leads by index, not the window',
  async () => {
    const dbPath = `${tmp.dir}/window-reads.sqlite`;
    server = await startServer({ dbPath });
    client = new Client({ connectionString: await postgresDatabaseFor(dbPath) });
    await client.connect();
    const decide = async (plan: SubmitPlan) =>
      (
        await client!.query<{ verdict: { kind: string } }>('select leads_submit($1::jsonb) as verdict', [
          JSON.stringify({ ...plan, lock_key: SUBMIT_LOCK_KEY }),
        ])
      ).rows[0].verdict;

    // The connection's first decisions, on near-empty tables.
    for (let i = 0; i < 8; i += 1) expect(await decide(planOf(NOW + i))).toMatchObject({ kind: 'created' });
    // Then the last hour fills: 3,000 other visitors' leads and events.
    await client.query(
      `insert into leads (request_id, name, telegram, telegram_key, phone, ip_hash, created_at)
     select 'fill-' || g, 'Fill', '@fill_' || g, '@fill_' || g, '+1555' || lpad(g::text, 7, '0'), 'fill-' || g, $1::bigint - g
       from generate_series(1, 3000) g`,
      [NOW],
    );
    await client.query(
      `insert into rate_events (kind, key_hash, at) select 'accepted', 'fill-' || g, $1::bigint - g from generate_series(1, 3000) g`,
      [NOW],
    );

    const plans: string[] = [];
    client.on('notice', (n) => plans.push(n.message ?? ''));
    for (const s of [
      "load 'auto_explain'",
      'set auto_explain.log_min_duration = 0',
      'set auto_explain.log_nested_statements = on',
      "set auto_explain.log_level = 'notice'",
    ])
      await client.query(s);
    expect(await decide(planOf(NOW + 100))).toMatchObject({ kind: 'created' });

    const all = plans.join('\n');
    expect(all).toContain('rate_events_key');
    expect(all).toContain('leads_telegram_key');
    expect(all).toContain('leads_phone');
    expect(all).not.toContain('rate_events_at');
    expect(all).not.toContain('leads_created_at');
  },
);
