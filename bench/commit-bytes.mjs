// What a new lead costs the disk on SQLite: the bytes the built server writes (`wchar` of /proc/<pid>/io: its WAL
// frames, the checkpoints that copy them into the database file, any temporary file, and its HTTP answers) per new
// lead, sent one at a time (each lead a commit of its own) and by 16 connections (group commit shares a commit's
// pages). Figures only.
//
//   npm run bench:bytes
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newLead } from './bodies.mjs';
import { load } from './load.mjs';
import { killAll, startServer, stop } from './processes.mjs';

const SECRET = 'bench-secret-0123456789abcdef';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const dir = mkdtempSync(join(tmpdir(), 'leads-commit-bytes-'));
const children = [];
const written = (pid) => Number(/^wchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))[1]);

try {
  const { child, url } = await startServer(
    {
      DATABASE_PATH: join(dir, 'leads.sqlite'),
      LEADS_SECRET: SECRET,
      LEADS_IP_SALT: 'bench-salt',
      LEADS_IP_LIMIT: '1000000000',
      LEADS_HOURLY_LIMIT: '1000000000',
      LEADS_THROTTLE_SUBMIT: '1000000000',
      LOG_LEVEL: 'warn',
    },
    children,
  );
  const headers = { 'X-Stickers-Leads-Secret': SECRET };
  for (const connections of [1, 16]) {
    const before = written(child.pid);
    const r = await load({ url: `${url}/leads`, connections, seconds: SECONDS, warmupSeconds: 0, next: () => newLead(), headers });
    const leads = r.statuses[201] ?? 0;
    const kb = (written(child.pid) - before) / 1024 / leads;
    console.log(
      `${connections} connection(s): ${leads} new leads, ${kb.toFixed(1)} KB written per lead (${(kb / 4).toFixed(1)} pages of 4 KB)`,
    );
  }
  await stop(child);
} finally {
  killAll(children);
  rmSync(dir, { recursive: true, force: true });
}
