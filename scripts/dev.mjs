#!/usr/bin/env node
// `npm run dev`: the Telegram sandbox, the leads server (watch mode) and the landing (Vite, hot reload) with development defaults, no secrets
// needed, SQLite under ./data/. Variables already set in the environment win. Ctrl-C stops everything.
// Another `npm run dev` running in this working copy, or a part's port already taken: one line saying so (naming the
// port and its variable), nothing built or started, exit 1 (`shared/` and `sandbox/` are rebuilt only after those checks:
// a rebuild under a running `npm run dev` restarts its server). The URLs are printed once every part answers.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { allAnswer, devParts, portTaken, portTakenLine, recordDev, runningDevLine, runningDevs } from './lib/dev-parts.mjs';

const root = new URL('..', import.meta.url).pathname;
const SANDBOX_PORT = process.env.SANDBOX_PORT ?? '3002';
const SERVER_PORT = process.env.PORT ?? '3000';
const LANDING_PORT = process.env.LANDING_PORT ?? '3001';
const TOKEN = '123456789:sandbox-token';

const devEnv = {
  DATABASE_PATH: './data/leads.sqlite',
  LEADS_SECRET: 'dev-secret-not-for-production',
  LEADS_IP_SALT: 'dev-salt-not-for-production',
  TELEGRAM_BOT_TOKEN: TOKEN,
  TELEGRAM_API_ROOT: `http://127.0.0.1:${SANDBOX_PORT}`,
  LEADS_CHAT_ID: '-1001000000001',
  ADMIN_CHAT_ID: '-1001000000002',
  SANDBOX_PORT,
  PORT: SERVER_PORT,
  // The inbox Mini App: the bot offers it, and the sandbox page links to it as each user it knows (signed launch data).
  LEADS_INBOX_URL: `http://127.0.0.1:${SERVER_PORT}/inbox`,
  SANDBOX_INBOX_URL: `http://127.0.0.1:${SERVER_PORT}/inbox`,
  // "Continue in Telegram": the sent screen's link opens the sandbox, which plays the visitor opening the bot.
  LEADS_TELEGRAM_LINK_ROOT: `http://127.0.0.1:${SANDBOX_PORT}/sandbox/t.me`,
  // The sandbox keeps its chats in memory, the database its cards: each run's message ids start at its start time in
  // seconds, past the ids of any earlier run (one message a second at most), so no old card names a message of this run.
  SANDBOX_FIRST_MESSAGE_ID: String(Math.floor(Date.now() / 1000)),
};
const env = { ...devEnv, ...process.env };
const parts = devParts({ ...env, LANDING_PORT });

// A second `npm run dev` in this working copy, whatever its ports: said in one line before anything is built (nest's
// watch mode empties server/dist, the build empties shared/dist and sandbox/dist: the first's server would restart).
const [other] = runningDevs(`${root}/data`);
if (other) {
  console.error(runningDevLine(other));
  process.exit(1);
}

const taken = [];
for (const part of parts) if (await portTaken(part)) taken.push(part);
if (taken.length > 0) {
  for (const part of taken) console.error(portTakenLine(part));
  process.exit(1);
}
mkdirSync(`${root}/data`, { recursive: true });
process.on('exit', recordDev(`${root}/data`));
const built = spawnSync('npm', ['run', 'build:shared'], { cwd: root, stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

const children = [];
function start(name, cmd, args, extraEnv = {}, cwd = root) {
  // Each child leads its own process group, so stopping it stops what it started (nest's watcher and its node).
  const child = spawn(cmd, args, { cwd, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const prefix = (line) => `[${name}] ${line}`;
  for (const stream of [child.stdout, child.stderr]) {
    let buf = '';
    stream.on('data', (d) => {
      buf += d;
      const lines = buf.split('\n');
      buf = lines.pop();
      for (const l of lines) {
        console.log(prefix(l));
        // Taken between the check above and the part's start: the same line, and dev stops rather than run without it.
        const part = parts.find((p) => p.name === name);
        if (/EADDRINUSE/.test(l) && part && !stopping) {
          console.error(portTakenLine(part));
          stop(1);
        }
      }
    });
  }
  child.on('exit', (code, signal) => {
    console.log(prefix(`exited (${signal ?? code})`));
    if (!stopping) stop(code ?? 1);
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const c of children) {
    if (c.exitCode !== null) continue;
    try {
      process.kill(-c.pid, 'SIGTERM');
    } catch {
      c.kill('SIGTERM');
    }
  }
  const exit = () => process.exit(code);
  const waiting = children.filter((c) => c.exitCode === null).map((c) => new Promise((r) => c.once('exit', r)));
  Promise.all(waiting).then(exit);
  setTimeout(() => {
    for (const c of children)
      if (c.exitCode === null)
        try {
          process.kill(-c.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
    exit();
  }, 8000).unref();
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

start('sandbox', process.execPath, ['sandbox/dist/cli.js']);
const server = start('server', 'npx', ['nest', 'start', '--watch', '--preserveWatchOutput']);
// The inbox's page (server/inbox-page) is bundled by esbuild into server/dist, which nest's watch mode empties
// when it starts: build it after each compile that nest reports clean (the page is read at its first request).
let pageBuild = null;
server.stdout.on('data', (d) => {
  if (!/Found 0 errors/.test(String(d)) || pageBuild) return;
  pageBuild = spawn(process.execPath, ['server/inbox-page/build.mjs'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  pageBuild.on('exit', (code) => {
    if (code !== 0) console.log(`[inbox] the page's build failed (${code}); /inbox answers 503 until it builds`);
    pageBuild = null;
  });
});
start(
  'landing',
  process.execPath,
  ['server.mjs'],
  {
    PORT: LANDING_PORT,
    LEADS_ENDPOINT: process.env.LEADS_ENDPOINT ?? `http://127.0.0.1:${SERVER_PORT}/leads`,
  },
  `${root}/landing`,
);

if (await allAnswer(parts, () => stopping))
  console.log(`
  Stickers Leads (development)
  - landing:          http://localhost:${LANDING_PORT}/
  - leads API:        http://localhost:${SERVER_PORT}/leads   (secret: ${env.LEADS_SECRET})
  - Telegram sandbox: http://127.0.0.1:${SANDBOX_PORT}/ (links "открыть инбокс как …" open the inbox as that user)
  - inbox:            ${env.LEADS_INBOX_URL}
  - database:         ${env.DATABASE_PATH}
  - the CLI on it:    DATABASE_PATH=${env.DATABASE_PATH} LEADS_IP_SALT=${env.LEADS_IP_SALT} npm run leads -- trace 1
  Ctrl-C stops everything.
`);
