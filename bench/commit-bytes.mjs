// What a new lead costs the disk on SQLite: the bytes the built server writes (`wchar` of /proc/<pid>/io: its WAL
// frames, the checkpoints that copy them into the database file, any temporary file, and its HTTP answers) per new
// lead, sent one at a time (each lead a commit of its own) and by 16 connections (group commit shares a commit's
// pages); then the WAL frames of a one-lead commit, counted while a reader holds the WAL (no checkpoint resets it).
// Figures only.
//
//   npm run bench:bytes
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newLead } from './bodies.mjs';
import { benchEnv, killAll, SECRET, startServer, stop } from './processes.mjs';

const Database = createRequire(import.meta.url)('better-sqlite3');
const dir = mkdtempSync(join(tmpdir(), 'leads-commit-bytes-'));
const children = [];
/** Posts `count` new leads over `connections` at once; resolves when all are answered 201. */
async function post(url, count, connections, headers) {
  let sent = 0;
  const loop = async () => {
    while (sent < count) {
      sent += 1;
      const res = await fetch(url, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: newLead() });
      if (res.status !== 201) throw new Error(`a new lead got ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
}
const written = (pid) => Number(/^wchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))[1]);

try {
  const file = join(dir, 'leads.sqlite');
  const { child, url } = await startServer(benchEnv(file), children);
  const headers = { 'X-Stickers-Leads-Secret': SECRET };
  // Fixed counts: what a commit writes grows with the trees it touches, so both servers are measured at the same sizes.
  for (const [connections, leads] of [
    [1, 2000],
    [16, 8000],
  ]) {
    const before = written(child.pid);
    await post(`${url}/leads`, leads, connections, headers);
    const kb = (written(child.pid) - before) / 1024 / leads;
    console.log(
      `${connections} connection(s): ${leads} new leads, ${kb.toFixed(1)} KB written per lead (${(kb / 4).toFixed(1)} pages of 4 KB)`,
    );
  }
  // A read transaction keeps every frame written after it in the WAL: its growth is the commits' frames.
  // The WAL emptied first (the server is idle): a commit after a full checkpoint would write over the file's old frames.
  const reader = new Database(file);
  reader.pragma('wal_checkpoint(TRUNCATE)');
  reader.prepare('begin').run();
  reader.prepare('select count(*) from leads').get();
  const walBefore = statSync(`${file}-wal`).size;
  await post(`${url}/leads`, 1000, 1, headers);
  const frames = (statSync(`${file}-wal`).size - walBefore) / (4096 + 24) / 1000;
  reader.prepare('commit').run();
  reader.close();
  console.log(`a one-lead commit (after 10,000 leads): ${frames.toFixed(1)} WAL frames`);
  await stop(child);
} finally {
  killAll(children);
  rmSync(dir, { recursive: true, force: true });
}
