// CPU time per request of a load run: the client, the servers and PostgreSQL (its backends), read from /proc, and
// what the rest of the machine used meanwhile. Shared by the benches.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** utime+stime in ms of a process; with `children`, plus its live children and the ones it reaped (PostgreSQL's backends). */
export function cpuMs(pid, children = false) {
  const fields = (p) => readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
  const f = fields(pid);
  let ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
  if (children)
    for (const p of readdirSync('/proc')) {
      if (!/^\d+$/.test(p)) continue;
      try {
        const c = fields(p);
        if (Number(c[1]) === pid) ticks += Number(c[11]) + Number(c[12]);
      } catch {
        /* gone meanwhile */
      }
    }
  return ticks * 10; // CLK_TCK is 100 on Linux
}
/** CPU time (ms) the whole machine spent busy (every process, every core), from /proc/stat. */
function machineBusyMs() {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return (user + nice + system + irq + softirq + steal) * 10;
}
/**
 * Runs `work` (a load run) and adds the CPU per request it cost: this process (the client), the servers, PostgreSQL;
 * and `others`, the cores' worth of CPU that the rest of the machine used meanwhile (another job running beside the
 * bench makes the run's figures unreliable: the lines show it).
 */
export async function withCpu(work, serverPids, pgPid = null) {
  // Every line starts with no dirty pages left by the line before: the bare NORMAL server leaves its writes to the
  // kernel, and the next server's first fsyncs would otherwise pay for writing them out (ext4 commits them together).
  execFileSync('sync');
  const sample = () => ({
    at: performance.now(),
    machine: machineBusyMs(),
    client: process.cpuUsage(),
    server: serverPids.reduce((sum, p) => sum + cpuMs(p), 0),
    pg: pgPid ? cpuMs(pgPid, true) : 0,
  });
  const before = sample();
  const r = await work();
  const after = sample();
  const perReq = (ms) => (ms * 1000) / Math.max(1, r.sent);
  const clientMs = (after.client.user + after.client.system - before.client.user - before.client.system) / 1000;
  const [serverMs, pgMs] = [after.server - before.server, after.pg - before.pg];
  const othersMs = after.machine - before.machine - clientMs - serverMs - pgMs;
  r.cpu = { client: perReq(clientMs), server: perReq(serverMs), pg: perReq(pgMs), others: Math.max(0, othersMs) / (after.at - before.at) };
  return r;
}
