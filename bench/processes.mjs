// The benches' child processes: a built server started on a free port and waited for, stopped with SIGTERM, and
// whatever is still running killed at the end.
import { freePort, run, waitForHttp } from '../e2e/stack.mjs';

/** The secret every bench server is started with. */
export const SECRET = 'bench-secret-0123456789abcdef';

/** A bench server's environment on SQLite file `db`: limits and throttles out of the way, warnings only. */
export const benchEnv = (db, extra = {}) => ({
  DATABASE_PATH: db,
  LEADS_SECRET: SECRET,
  LEADS_IP_SALT: 'bench-salt',
  LEADS_IP_LIMIT: '1000000000',
  LEADS_HOURLY_LIMIT: '1000000000',
  // One caller sends every request here: the per-caller throttles must not be what is measured.
  LEADS_THROTTLE_SUBMIT: '1000000000',
  LEADS_THROTTLE_API: '1000000000',
  LEADS_THROTTLE_EXPORT: '1000000000',
  LOG_LEVEL: 'warn',
  ...extra,
});

/** Starts `server/dist/main.js` with `env` on a free port, remembered in `children`; resolves once /health answers. */
export async function startServer(env, children) {
  const port = await freePort();
  const child = run('server', ['server/dist/main.js'], { ...env, PORT: String(port) });
  children.push(child);
  await waitForHttp(`http://127.0.0.1:${port}/health`, child, 'server');
  return { child, url: `http://127.0.0.1:${port}` };
}

/** SIGTERM, resolved once the process has exited (at once when it already has). */
export async function stop(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** SIGKILL for every child still running. */
export function killAll(children) {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
}
