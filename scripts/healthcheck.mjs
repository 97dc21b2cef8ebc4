// Docker HEALTHCHECK: GET /health of this container's own role, on exactly that role's port. Probing any other port
// would let a landing container that shares a network with the server report healthy while the landing is down.
// Docker starts this with the container's configured environment, not the one the entrypoint exported, so the role
// and its port are read from the role's process: PID 1 after the entrypoint's exec, or (under `docker run --init`)
// the first process that carries STICKERS_ROLE.
import { readdirSync, readFileSync } from 'node:fs';

const DEFAULT_PORT = { server: '3000', landing: '3001' };

function environOf(pid) {
  try {
    const env = {};
    for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
      const eq = entry.indexOf('=');
      if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return env;
  } catch {
    return null;
  }
}

function roleEnv() {
  const first = environOf(1);
  if (first?.STICKERS_ROLE) return first;
  const pids = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .sort((a, b) => a - b);
  for (const pid of pids) {
    if (pid === process.pid) continue;
    const env = environOf(pid);
    if (env?.STICKERS_ROLE) return env;
  }
  return null;
}

const env = roleEnv();
const role = env?.STICKERS_ROLE;
if (!role || !(role in DEFAULT_PORT)) {
  console.log(`no server or landing process in this container (role: ${role ?? 'none'})`);
  process.exit(1);
}
const port = env.PORT || DEFAULT_PORT[role];
// Either role may be bound to one address (HOST); bound to every interface, loopback reaches it.
const host = env.HOST && !['0.0.0.0', '::'].includes(env.HOST) ? env.HOST : '127.0.0.1';
const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/health`;
try {
  const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
  console.log(`${role} ${url} → ${res.status}`);
  process.exit(res.ok ? 0 : 1);
} catch (err) {
  console.log(`${role} ${url} → ${err?.cause?.code ?? err?.name ?? err}`);
  process.exit(1);
}
