// Where the server's CPU goes per request: the built server under `node --cpu-prof` on a fresh SQLite database,
// PROFILE_CONNECTIONS keep-alive connections of one kind of request for PROFILE_SECONDS, then SIGTERM (the profile is
// written at exit) and the samples summed by self time: the functions above PROFILE_MIN_PERCENT, and the shares of
// our code, each library and Node's internals.
//
//   npm run build && PROFILE_KIND=new node bench/cpu-profile.mjs     (new | duplicate | invalid)
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, root, run, waitForHttp } from '../e2e/stack.mjs';
import { invalid, newLead } from './bodies.mjs';
import { load } from './load.mjs';
import { benchEnv, SECRET, stop } from './processes.mjs';

const KINDS = (process.env.PROFILE_KIND ?? 'new').split(',');
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 16);
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 8);
const MIN_PERCENT = Number(process.env.PROFILE_MIN_PERCENT ?? 1.5);

const bodies = {
  new: () => newLead(),
  duplicate: (() => {
    const body = JSON.stringify({ request_id: randomUUID(), name: 'Дубль', telegram: '@bench_duplicate', phone: '+79990001122' });
    return () => body;
  })(),
  invalid,
};
for (const kind of KINDS) if (!bodies[kind]) throw new Error(`PROFILE_KIND must be one of ${Object.keys(bodies).join(', ')}`);

const dir = mkdtempSync(join(tmpdir(), 'leads-profile-'));
const port = await freePort();
const url = `http://127.0.0.1:${port}/leads`;
const child = run(
  'server',
  ['--cpu-prof', `--cpu-prof-dir=${dir}`, 'server/dist/main.js'],
  benchEnv(join(dir, 'leads.sqlite'), { PORT: String(port) }),
);
try {
  await waitForHttp(`http://127.0.0.1:${port}/health`, child, 'server');
  for (const kind of KINDS) {
    const headers = { 'X-Stickers-Leads-Secret': SECRET };
    const r = await load({ url, connections: CONNECTIONS, seconds: SECONDS, warmupSeconds: 2, next: bodies[kind], headers });
    console.log(`${kind}, ${CONNECTIONS} connections, ${SECONDS} s: ${r.rps.toFixed(0)} req/s (${JSON.stringify(r.statuses)})`);
  }
  await stop(child);
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('the server wrote no profile');
  summarise(JSON.parse(readFileSync(join(dir, file), 'utf8')));
} finally {
  if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}

/** Self time per function and per owner (ours, a package, Node), in percent of the samples. */
function summarise(profile) {
  const self = new Map();
  const total = profile.samples.length;
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const owners = new Map();
  for (const node of profile.nodes) {
    const n = counts.get(node.id) ?? 0;
    if (n === 0) continue;
    const { functionName, url: source, lineNumber } = node.callFrame;
    const owner = ownerOf(source, functionName);
    const name = `${functionName || '(anonymous)'} ${source ? `${source.replace(`file://${root}`, '')}:${lineNumber + 1}` : ''}`.trim();
    self.set(name, (self.get(name) ?? 0) + n);
    owners.set(owner, (owners.get(owner) ?? 0) + n);
  }
  const pct = (n) => ((100 * n) / total).toFixed(1).padStart(5);
  console.log(`\nby owner (self time, ${total} samples):`);
  for (const [owner, n] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${pct(n)} %  ${owner}`);
  console.log(`\nfunctions at ${MIN_PERCENT} % or more:`);
  for (const [name, n] of [...self].sort((a, b) => b[1] - a[1])) {
    if ((100 * n) / total < MIN_PERCENT) break;
    console.log(`${pct(n)} %  ${name}`);
  }
}

function ownerOf(source, functionName) {
  if (!source) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source);
  if (pkg) return pkg[1];
  if (source.startsWith('node:')) return 'node internals';
  if (source.includes('/server/dist/')) return 'ours (server)';
  if (source.includes('/shared/dist/')) return 'ours (shared)';
  return source;
}
