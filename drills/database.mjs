#!/usr/bin/env node
// `npm run drill:database`: two server instances on one PostgreSQL under a steady light load, taken through four
// database faults one after another:
//  a. the submit lock held from outside (another session's `pg_advisory_xact_lock` on SUBMIT_LOCK_KEY) for longer than
//     DATABASE_BUSY_TIMEOUT_MS, then let go;
//  b. every client backend terminated (`pg_terminate_backend`), as an administrator or a failover does;
//  c. PostgreSQL stopped (`pg_ctl stop -m fast`) for 10 s, then started again on the same data directory and port;
//  d. one instance frozen (SIGSTOP) at a moment it is inside a submit decision (its connection seen in pg_locks)
//     for 8 s, then let go on (SIGCONT); it says whether its connection still held or waited for the lock 0.2 s later.
// The load: a few posters, each sending new leads with distinct request_ids to the instances round robin (as a load
// balancer would); an answer other than 2xx is retried with the same request_id on the next instance after a pause,
// as the landing's spool does, and some acknowledged request_ids are sent once more (a retry after a lost answer).
// Per phase it prints: leads acknowledged (2xx), lost (acknowledged, missing from the database at the end), request_ids
// with two lead numbers (or two request_ids given one number), the answers by status, connection errors and timeouts
// from an instance neither dead nor frozen, the instances that died, and the seconds from the fault's end until each
// instance answers a POST /leads of its own (sent to it directly) with 2xx again. Exits 1 on a lost lead, a double
// number, an answer other than 2xx / 429 / 503, a connection error or timeout from a live instance, a dead instance,
// or an instance not serving again within 30 s of the fault's end. An instance that died or did not come back is
// started afresh before the next phase, so every phase starts from two serving instances.
// Only loopback addresses; the instances' logs are kept in a temp dir while it runs (the last lines of a failing
// instance are printed); everything started and every temp dir is removed at the end, on failure and on Ctrl-C too
// (DRILL_KEEP_LOGS=1 keeps the logs' dir). The whole drill is bounded (DRILL_DEADLINE_SEC, 300). DRILL_PHASES (a,b,c,d)
// runs only some of the phases, in that order.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, createWriteStream, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { freePort, run, waitForHttp } from '../e2e/stack.mjs';
import { startPostgres } from '../scripts/lib/throwaway-postgres.cjs';
import { EXIT_WITH_PARENT, checkAcknowledged, cleanupList, storedRequests } from './lib/common.mjs';

const require = createRequire(import.meta.url);
const { startSandbox } = require('../sandbox/dist/index.js');
const { SUBMIT_LOCK_KEY } = require('../server/dist/repositories/submit-runner.js');

const BUSY_TIMEOUT_MS = 3000; // DATABASE_BUSY_TIMEOUT_MS of the instances
const LOCK_HOLD_MS = 4000; // phase a: longer than BUSY_TIMEOUT_MS
const DOWN_MS = 10_000; // phase c
const FREEZE_MS = 8000; // phase d
const RECOVERY_LIMIT_MS = 30_000; // every instance must serve again within this long of the fault's end
const BEFORE_FAULT_MS = 3000; // load before each fault
const AFTER_RECOVERY_MS = 2000; // load after every instance serves again, before the next phase
const REQUEST_TIMEOUT_MS = 5000; // the landing's timeout
const RETRY_PAUSE_MS = 200;
const POSTERS = 3;
const LOG_LINES = 25; // printed of a failing instance's log
const DEADLINE_MS = Number(process.env.DRILL_DEADLINE_SEC ?? 300) * 1000;
const KEEP_LOGS = process.env.DRILL_KEEP_LOGS === '1';
const ONLY = (process.env.DRILL_PHASES || 'a,b,c,d').split(',').map((id) => id.trim());
if (ONLY.some((id) => !['a', 'b', 'c', 'd'].includes(id))) {
  console.error(`DRILL_PHASES must be a comma-separated list of a, b, c, d (got "${process.env.DRILL_PHASES}")`);
  process.exit(2);
}

const SECRET = 'drill-secret-0123456789abcdef';
const LEADS_CHAT = -1001000000001;
const ADMIN_CHAT = -1001000000002;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const noop = () => undefined;
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
const progress = (line) => process.stderr.write(`[drill ${elapsed()}] ${line}\n`);
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

const { add: addCleanup, cleanup } = cleanupList(progress);
const logDir = mkdtempSync(join(tmpdir(), 'leads-database-drill-'));
const removeLogs = () => (KEEP_LOGS ? undefined : rmSync(logDir, { recursive: true, force: true }));
addCleanup(() => (KEEP_LOGS ? progress(`server logs kept in ${logDir}`) : removeLogs()));
process.on('exit', removeLogs);

// A drill that hangs (a fault the code under test never comes back from) is stopped, not waited for.
const deadline = setTimeout(() => {
  console.error(`database drill: still running after ${seconds(DEADLINE_MS)}: FAILED (stopped)`);
  void cleanup().finally(() => process.exit(1));
}, DEADLINE_MS);
deadline.unref();

try {
  process.exitCode = await drill();
} catch (err) {
  console.error(`database drill broke off: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
}
await cleanup();

async function drill() {
  progress('starting PostgreSQL');
  const postgres = await startPostgres({ maxConnections: 100 });
  addCleanup(() => postgres.stop());
  const databaseUrl = await postgres.createDatabase('leads_database_drill');
  const pgServer = restartablePostgres(postgres);
  addCleanup(() => pgServer.stopRestarted());

  /** A short-lived connection of the drill's own (every backend may be terminated under a pool). */
  async function withClient(fn) {
    const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
    client.on('error', noop);
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end().catch(noop);
    }
  }

  const sandbox = await startSandbox();
  addCleanup(() => sandbox.stop());

  // --- The instances: started from server/dist, each one's output in a log file of the temp dir. ---
  const instances = [];
  for (let i = 0; i < 2; i += 1) {
    const port = await freePort();
    instances.push({ name: `server-${i + 1}`, port, url: `http://127.0.0.1:${port}`, child: null, up: false, starts: 0, freezes: [] });
  }
  /** The phase now running; every request, answer and exit counts towards the phase it happened in. */
  let phase = null;
  function serverEnv(instance) {
    return {
      PORT: String(instance.port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      DATABASE_POOL_MAX: '5',
      DATABASE_BUSY_TIMEOUT_MS: String(BUSY_TIMEOUT_MS),
      LEADS_SECRET: SECRET,
      LEADS_IP_SALT: 'drill-salt',
      LEADS_IP_LIMIT: '1000000000',
      LEADS_HOURLY_LIMIT: '1000000000',
      // One caller sends every request here: the per-caller throttles must not be what is measured.
      LEADS_THROTTLE_SUBMIT: '1000000000',
      LEADS_THROTTLE_API: '1000000000',
      LEADS_THROTTLE_EXPORT: '1000000000',
      TELEGRAM_BOT_TOKEN: sandbox.token,
      TELEGRAM_API_ROOT: sandbox.url,
      LEADS_CHAT_ID: String(LEADS_CHAT),
      ADMIN_CHAT_ID: String(ADMIN_CHAT),
      PUBLISH_INTERVAL_SEC: '1',
      LOG_LEVEL: 'warn',
    };
  }
  async function startInstance(instance) {
    instance.starts += 1;
    const child = run(instance.name, ['--import', EXIT_WITH_PARENT, 'server/dist/main.js'], serverEnv(instance));
    const log = createWriteStream(join(logDir, `${instance.name}.log`), { flags: 'a' });
    log.write(`--- start ${instance.starts} (pid ${child.pid}) at +${elapsed()}\n`);
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    instance.child = child;
    child.start = instance.starts;
    child.expectedExit = false;
    child.once('exit', (code, signal) => {
      instance.up = false;
      child.exitedAt = Date.now();
      log.end(`--- pid ${child.pid} exited: ${code ?? signal} at +${elapsed()}\n`);
      if (!child.expectedExit) {
        child.died = true;
        const line = `${instance.name} (pid ${child.pid}) exited by itself: ${code ?? signal}`;
        (phase ?? setup).died.push(line);
        (phase ?? setup).failing.set(child, instance.name);
        progress(line);
      }
    });
    await waitForHttp(`${instance.url}/health`, child, instance.name, 30000);
    instance.up = true;
  }
  async function stopInstance(instance, signal) {
    const child = instance.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.expectedExit = true;
    instance.up = false;
    const exited = new Promise((r) => child.once('exit', r));
    if (instance.freezes.at(-1)?.to === null) child.kill('SIGCONT');
    child.kill(signal);
    const overdue = setTimeout(() => {
      progress(`${instance.name} did not stop within 15 s of ${signal}: SIGKILL`);
      child.kill('SIGKILL');
    }, 15000);
    await exited;
    clearTimeout(overdue);
  }
  addCleanup(() => Promise.all(instances.map((instance) => stopInstance(instance, 'SIGKILL'))));
  const setup = newPhase('setup', 'start');

  progress('starting 2 instances (the first one migrates the database)');
  await startInstance(instances[0]);
  await startInstance(instances[1]);

  // --- The load. ---
  const answers = new Map(); // request_id -> Set of lead numbers answered
  const ackedIn = new Map(); // request_id -> the phase it was first acknowledged in
  let seq = 0;
  let roundRobin = 0;
  let loadStopping = false;
  function newLead(kind) {
    seq += 1;
    // A contact of its own for every lead: no repeats, so two request_ids must never share a number.
    return {
      request_id: crypto.randomUUID(),
      name: kind === 'probe' ? 'Проба Драйл' : 'База Драйл',
      telegram: `@database_drill_${seq}`,
      phone: `+7913${String(seq).padStart(7, '0')}`,
      client_ip: `10.3.${(seq >> 8) & 255}.${seq & 255}`,
    };
  }
  const frozenDuring = (instance, from, to) => instance.freezes.some((f) => from < (f.to ?? Infinity) && to > f.from);
  /** One POST /leads to `instance`; the answer (or the failure) counts towards the phase it was sent in. */
  async function post(instance, lead) {
    const counted = phase ?? setup;
    const child = instance.child;
    const sentAt = Date.now();
    counted.requests += 1;
    try {
      const res = await fetch(`${instance.url}/leads`, {
        method: 'POST',
        headers: { 'X-Stickers-Leads-Secret': SECRET, 'Content-Type': 'application/json' },
        body: JSON.stringify(lead),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await res.text();
      counted.statuses.set(res.status, (counted.statuses.get(res.status) ?? 0) + 1);
      if (res.status === 200 || res.status === 201) {
        const number = JSON.parse(text).lead_number;
        if (!answers.has(lead.request_id)) {
          answers.set(lead.request_id, new Set());
          ackedIn.set(lead.request_id, counted);
          counted.acked += 1;
        }
        answers.get(lead.request_id).add(number);
        return number;
      }
      if (res.status !== 503 && res.status !== 429) {
        counted.failing.set(child, instance.name);
        if (counted.odd.length < 5) counted.odd.push(`${instance.name}: ${res.status} ${text.slice(0, 200)}`);
      }
      return null;
    } catch (err) {
      const at = Date.now();
      const why = err?.name === 'TimeoutError' ? `no answer within ${seconds(REQUEST_TIMEOUT_MS)}` : (err?.cause?.code ?? String(err));
      counted.connectionErrors.push({ instance, child, sentAt, at, why });
      return null;
    }
  }
  /** The next instance round robin; one known to be down is skipped (a load balancer's health check). */
  function nextInstance() {
    for (let tried = 0; tried < instances.length; tried += 1) {
      const instance = instances[roundRobin++ % instances.length];
      if (instance.up) return instance;
    }
    return null;
  }
  async function poster() {
    while (!loadStopping) {
      const lead = newLead('load');
      let number = null;
      const given = Date.now();
      // Retried with the same request_id until acknowledged; once the load stops, for at most 10 s more.
      while (number === null && !(loadStopping && Date.now() - given > 10_000)) {
        const instance = nextInstance();
        if (instance) number = await post(instance, lead);
        if (number === null) await sleep(RETRY_PAUSE_MS);
      }
      // About one acknowledged lead in five is sent again, as a landing does that lost the answer.
      if (number !== null && seq % 5 === 0) {
        const instance = nextInstance();
        if (instance) await post(instance, lead);
      }
      await sleep(150);
    }
  }

  /**
   * Seconds from `faultEnd` until each instance answers a POST /leads of its own with 2xx, polled directly; null for
   * one that did not within RECOVERY_LIMIT_MS, 'died' for one whose process ended.
   */
  async function recovery(faultEnd) {
    const times = {};
    await Promise.all(
      instances.map(async (instance) => {
        const child = instance.child;
        while (Date.now() - faultEnd < RECOVERY_LIMIT_MS) {
          if (child.exitCode !== null || child.signalCode !== null) {
            times[instance.name] = 'died';
            return;
          }
          if ((await post(instance, newLead('probe'))) !== null) {
            times[instance.name] = (Date.now() - faultEnd) / 1000;
            return;
          }
          await sleep(RETRY_PAUSE_MS);
        }
        times[instance.name] = child.exitCode !== null || child.signalCode !== null ? 'died' : null;
      }),
    );
    return times;
  }

  // --- The faults. ---
  const lockKey = BigInt(SUBMIT_LOCK_KEY);
  const phases = [
    newPhase('a', `submit lock held from outside for ${seconds(LOCK_HOLD_MS)} (DATABASE_BUSY_TIMEOUT_MS ${BUSY_TIMEOUT_MS})`, async (p) => {
      const holder = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
      holder.on('error', noop);
      await holder.connect();
      try {
        await holder.query('begin');
        await holder.query(`select pg_advisory_xact_lock(${SUBMIT_LOCK_KEY})`);
        progress(`submit lock taken from outside; holding it ${seconds(LOCK_HOLD_MS)}`);
        await sleep(LOCK_HOLD_MS);
        await holder.query('rollback');
        p.notes.push('lock taken and held, then rolled back');
      } finally {
        await holder.end().catch(noop);
      }
      return Date.now();
    }),
    newPhase('b', 'every client backend terminated', async (p) => {
      const { rows } = await withClient((c) =>
        c.query(
          `select pg_terminate_backend(pid) as done from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()`,
        ),
      );
      p.notes.push(`${rows.filter((r) => r.done).length} backends terminated`);
      progress(`terminated ${rows.length} backends`);
      return Date.now();
    }),
    newPhase('c', `PostgreSQL stopped for ${seconds(DOWN_MS)} and started again`, async (p) => {
      const stopAt = Date.now();
      await pgServer.stop();
      progress(`PostgreSQL stopped (fast) in ${seconds(Date.now() - stopAt)}; down for ${seconds(DOWN_MS)}`);
      await sleep(DOWN_MS);
      const startAt = Date.now();
      await pgServer.start();
      p.notes.push(`stopped in ${seconds(startAt - DOWN_MS - stopAt)}, started again in ${seconds(Date.now() - startAt)}`);
      progress('PostgreSQL accepts connections again');
      return Date.now();
    }),
    newPhase('d', `one instance frozen (SIGSTOP) for ${seconds(FREEZE_MS)}, at a moment it is inside a decision`, async (p) => {
      const victim = instances[0];
      const pid = victim.child.pid;
      // pg_locks is polled for the submit lock held or waited for by one of the victim's connections (known by their
      // client ports); it is frozen the moment one is seen, and checked 0.2 s later. A miss (its backend finished the
      // decision in between) is thawed and tried again, for at most 5 s; then it is frozen anyway.
      const caught = await withClient(async (c) => {
        const lockRows = async () =>
          (
            await c.query(
              `select a.pid, a.client_port, l.granted from pg_locks l join pg_stat_activity a on a.pid = l.pid ` +
                `where l.locktype = 'advisory' and l.classid = $1 and l.objid = $2 and l.objsubid = 1`,
              [String(lockKey >> 32n), String(lockKey & 0xffffffffn)],
            )
          ).rows;
        const victims = (rows) => {
          const ports = localPorts(pid);
          return rows.filter((r) => ports.has(r.client_port));
        };
        const tryUntil = Date.now() + 5000;
        let misses = 0;
        while (Date.now() < tryUntil) {
          const rows = await lockRows();
          if (rows.length === 0 || victims(rows).length === 0) continue;
          freeze(victim);
          await sleep(200);
          const inside = victims(await lockRows());
          const holds = inside.find((r) => r.granted);
          if (holds) return `holding the submit lock 0.2 s after (backend ${holds.pid}; ${misses} misses before)`;
          if (inside.length > 0) return `waiting for the submit lock 0.2 s after (backend ${inside[0].pid}; ${misses} misses before)`;
          thaw(victim);
          misses += 1;
        }
        freeze(victim);
        // A decision that holds the lock only inside one statement is finished by its backend, frozen client or not.
        return misses > 0
          ? `${misses} times while its connection held or waited for the submit lock, never still in it 0.2 s later; frozen anyway`
          : 'never seen inside a decision within 5 s; frozen anyway';
      });
      const frozenAt = victim.freezes.at(-1).from;
      p.notes.push(`${victim.name} (pid ${pid}) frozen ${caught}`);
      progress(`${victim.name} frozen, ${caught}`);
      await sleep(Math.max(0, frozenAt + FREEZE_MS - Date.now()));
      thaw(victim);
      progress(`${victim.name} let go on (SIGCONT) after ${seconds(Date.now() - frozenAt)}`);
      return Date.now();
    }),
  ].filter((p) => ONLY.includes(p.id));
  /** SIGSTOP; a detached watchdog kills the frozen process if this drill dies before it is let go on. */
  function freeze(instance) {
    const pid = instance.child.pid;
    const watchdog = spawn(
      'sh',
      [
        '-c',
        'while kill -0 "$1" 2>/dev/null; do sleep 0.5; done; kill -KILL "$2" 2>/dev/null',
        'freeze-watchdog',
        String(process.pid),
        String(pid),
      ],
      { detached: true, stdio: 'ignore' },
    );
    watchdog.unref();
    instance.child.kill('SIGSTOP');
    instance.freezes.push({ from: Date.now(), to: null, watchdog });
  }
  function thaw(instance) {
    const f = instance.freezes.at(-1);
    if (!f || f.to !== null) return;
    instance.child.kill('SIGCONT');
    f.to = Date.now();
    f.watchdog.kill('SIGKILL');
  }

  progress(`load on (${POSTERS} posters); phases ${phases.map((p) => p.id).join(', ')}`);
  const posters = Array.from({ length: POSTERS }, poster);
  for (const p of phases) {
    phase = p;
    await sleep(BEFORE_FAULT_MS);
    progress(`phase ${p.id}: ${p.title}`);
    p.faultEnd = await p.fault(p);
    p.recovery = await recovery(p.faultEnd);
    progress(`phase ${p.id}: back to 2xx ${describeRecovery(p.recovery)}`);
    await sleep(AFTER_RECOVERY_MS);
    // Each phase starts from two serving instances: one that died or did not come back is started afresh.
    for (const instance of instances) {
      const r = p.recovery[instance.name];
      if (r === null || r === 'died' || !instance.up) {
        p.failing.set(instance.child, instance.name);
        p.restarted.push(instance.name);
        await stopInstance(instance, 'SIGKILL');
        await startInstance(instance);
        progress(`${instance.name} started afresh after phase ${p.id}`);
      }
    }
  }
  loadStopping = true;
  await Promise.all(posters);
  phase = null;
  progress('load stopped; stopping the instances');
  await Promise.all(instances.map((instance) => stopInstance(instance, 'SIGTERM')));

  // --- Verification, by SQL on PostgreSQL. ---
  const stored = await withClient((c) => storedRequests(c));
  const checked = checkAcknowledged(answers, stored.byRequest);
  const byNumber = new Map();
  for (const [requestId, numbers] of answers) for (const n of numbers) byNumber.set(n, [...(byNumber.get(n) ?? []), requestId]);
  const shared = [...byNumber].filter(([, ids]) => ids.length > 1);
  const all = [setup, ...phases];
  for (const id of checked.lost) ackedIn.get(id).lost.push(id);
  for (const id of checked.twoNumbers) ackedIn.get(id).doubles.push(id);
  for (const [, ids] of shared) ackedIn.get(ids[0]).doubles.push(...ids);
  for (const p of all) {
    for (const e of p.connectionErrors) {
      // An instance that exits drops the requests it holds: counted under its death (or not at all when the drill
      // stopped it), not as a live instance's error.
      const exiting = e.child.exitedAt !== undefined && e.child.exitedAt <= e.at + 2000;
      if (frozenDuring(e.instance, e.sentAt, e.at)) p.frozenErrors += 1;
      else if (exiting) p.exitingErrors += 1;
      else {
        p.liveErrors.push(e);
        p.failing.set(e.child, e.instance.name);
      }
    }
  }

  const version = (await withClient((c) => c.query('show server_version'))).rows[0].server_version;
  const violations = [
    ...checked.violations,
    ...shared.map(([n, ids]) => `lead #${n} answered to ${ids.length} request_ids: ${ids.join(', ')}`),
  ];
  const lines = [];
  let broken = violations.length > 0;
  for (const p of all) {
    const others = [...p.statuses].filter(([s]) => ![200, 201, 429, 503].includes(s));
    const late = instances.filter((i) => p.recovery && (p.recovery[i.name] === null || p.recovery[i.name] === 'died'));
    const pBroken =
      p.lost.length > 0 || p.doubles.length > 0 || others.length > 0 || p.liveErrors.length > 0 || p.died.length > 0 || late.length > 0;
    broken ||= pBroken;
    if (p.id === 'setup' && !pBroken) continue;
    lines.push(
      `  phase ${p.id} (${p.title}): ${pBroken ? 'FAILED' : 'ok'}` +
        (p.notes.length > 0 ? `\n    ${p.notes.join('; ')}` : '') +
        `\n    requests ${p.requests}: acknowledged ${p.acked}, lost ${p.lost.length}, double numbers ${p.doubles.length}` +
        `\n    answers ${describeStatuses(p.statuses)}; 500s ${p.statuses.get(500) ?? 0}, other than 2xx/429/503 ${others.reduce((s, [, n]) => s + n, 0)}` +
        `\n    connection errors and timeouts: from a live instance ${p.liveErrors.length}, from the frozen one ${p.frozenErrors} (expected), from one exiting (died, or stopped by the drill) ${p.exitingErrors}` +
        `\n    died ${p.died.length}${p.died.length > 0 ? ` (${p.died.join('; ')})` : ''}` +
        (p.recovery
          ? `\n    every instance answers 2xx again: ${describeRecovery(p.recovery)} after the fault's end (limit ${seconds(RECOVERY_LIMIT_MS)})`
          : '') +
        (p.restarted.length > 0 ? `\n    started afresh after it: ${p.restarted.join(', ')}` : ''),
    );
    for (const o of p.odd) lines.push(`    ! ${o}`);
    for (const e of p.liveErrors.slice(0, 3))
      lines.push(`    ! ${e.instance.name}: ${e.why} (sent at +${seconds(e.sentAt - started)}, pid ${e.child.pid})`);
  }
  console.log(
    `database drill: 2 instances on one PostgreSQL ${version}, DATABASE_BUSY_TIMEOUT_MS ${BUSY_TIMEOUT_MS}, ${POSTERS} posters round robin\n` +
      `${lines.join('\n')}\n` +
      `  in all: acknowledged ${answers.size}, lost ${checked.lost.length}, request_ids with two numbers ${checked.twoNumbers.length}, ` +
      `numbers given to two request_ids ${shared.length}; stored leads ${stored.leads}, repeats ${stored.repeats}; ` +
      `starts ${instances.map((i) => `${i.name} ${i.starts}`).join(', ')}; took ${elapsed()}`,
  );
  for (const v of violations.slice(0, 10)) console.log(`  ! ${v}`);
  if (!broken) {
    console.log('OK');
    return 0;
  }
  // The last lines of each failing process (one start of an instance; the whole logs are in the temp dir).
  const failing = new Map();
  for (const p of all)
    for (const [child, name] of p.failing) failing.set(child, { name, phases: [...(failing.get(child)?.phases ?? []), p.id] });
  for (const [child, { name, phases: where }] of failing) {
    const tail = child.output.trimEnd().split('\n').slice(-LOG_LINES);
    const exit = child.exitCode ?? child.signalCode;
    console.log(
      `--- ${name}, pid ${child.pid} (start ${child.start}; failing in phase ${where.join(', ')}; ${child.died ? `died: ${exit}` : exit === null ? 'running' : `stopped: ${exit}`}), last ${tail.length} lines:`,
    );
    for (const line of tail) console.log(line.length > 400 ? `${line.slice(0, 400)} …` : line);
  }
  console.log('FAILED');
  return 1;
}

function newPhase(id, title, fault) {
  return {
    id,
    title,
    fault,
    notes: [],
    requests: 0,
    acked: 0,
    statuses: new Map(),
    odd: [],
    connectionErrors: [],
    liveErrors: [],
    frozenErrors: 0,
    exitingErrors: 0,
    died: [],
    lost: [],
    doubles: [],
    failing: new Map(), // child process -> instance name
    restarted: [],
    recovery: null,
    faultEnd: null,
  };
}

function describeStatuses(statuses) {
  return [...statuses]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s} ×${n}`)
    .join(', ');
}

function describeRecovery(times) {
  return Object.entries(times)
    .map(([name, t]) => `${name} ${t === null ? 'not within the limit' : t === 'died' ? 'died' : `${t.toFixed(1)} s`}`)
    .join(', ');
}

/**
 * Stop and start again the throwaway server on the same data directory and port (the launcher only stops it for good):
 * the postmaster's own command line (/proc, else its data directory's postmaster.opts) is run again, as the user it
 * ran as, and pg_ctl is the one beside its binary. `stopRestarted()` stops a server started here (the launcher's
 * stop() then only removes the directory).
 */
function restartablePostgres(postgres) {
  const proc = `/proc/${postgres.pid}`;
  let argv = readFileSync(`${proc}/cmdline`, 'utf8').split('\0').slice(0, -1);
  if (!argv.includes('-D')) {
    // A postmaster that rewrote its process title: the command line it wrote into its data directory (its cwd).
    const opts = readFileSync(join(readlinkSync(`${proc}/cwd`), 'postmaster.opts'), 'utf8').trim();
    argv = [...opts.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[1] ?? m[2]);
  }
  const [binary, ...args] = argv;
  const data = args[args.indexOf('-D') + 1];
  const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`${proc}/status`, 'utf8'))[1]);
  const user = uid !== process.getuid?.() ? execFileSync('id', ['-nu', String(uid)], { encoding: 'utf8' }).trim() : null;
  const as = (file, fileArgs) => (user ? ['runuser', ['-u', user, '--', file, ...fileArgs]] : [file, fileArgs]);
  let restarted = null;
  /** `pg_ctl stop -m fast`, waited for (at most 30 s) without blocking the load's event loop. */
  function pgCtlStop() {
    const [file, fileArgs] = as(join(dirname(binary), 'pg_ctl'), ['stop', '-D', data, '-m', 'fast', '-w', '-t', '30']);
    return new Promise((resolve, reject) => {
      const child = spawn(file, fileArgs, { cwd: dirname(data), stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`pg_ctl stop -m fast exited with ${code}: ${output}`))));
    });
  }
  return {
    stop: pgCtlStop,
    async start() {
      const [file, fileArgs] = as(binary, args);
      const fd = openSync(join(dirname(data), 'postgres.log'), 'a');
      const child = spawn(file, fileArgs, { cwd: dirname(data), stdio: ['ignore', fd, fd] });
      closeSync(fd);
      child.unref();
      restarted = child;
      const until = Date.now() + 30_000;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`PostgreSQL did not start again (exit ${child.exitCode})`);
        const client = new pg.Client({ connectionString: postgres.url, connectionTimeoutMillis: 1000 });
        client.on('error', noop);
        try {
          await client.connect();
          await client.query('select 1');
          return;
        } catch (err) {
          if (Date.now() > until)
            throw new Error(`PostgreSQL did not accept connections again within 30 s: ${String(err)}`, { cause: err });
          await sleep(50);
        } finally {
          await client.end().catch(noop);
        }
      }
    },
    async stopRestarted() {
      if (!restarted || restarted.exitCode !== null || restarted.signalCode !== null) return;
      const exited = new Promise((r) => restarted.once('exit', r));
      await pgCtlStop();
      await exited;
    },
  };
}

/** The local TCP ports of `pid`'s sockets (its connections to PostgreSQL among them), from /proc. */
function localPorts(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && inodes.has(cols[9])) ports.add(parseInt(cols[1].split(':').at(-1), 16));
    }
  }
  return ports;
}
