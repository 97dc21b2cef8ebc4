/**
 * `npm run leads -- <command>` on commander: a help per command, "unknown command 'X'" for any other word, usage
 * errors in one line with a pointer to the help and exit 2; and the root script's wrapper says to build first when there is no build.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CliIo } from '../src/cli/cli-io';
import { runCli, type OpsCommands } from '../src/cli/program';
import { tempDir } from './harness';

const calls: unknown[][] = [];
const record =
  (name: string) =>
  (...args: unknown[]) => {
    calls.push([name, ...args]);
    return Promise.resolve(0);
  };
const OPS: OpsCommands = {
  trace: record('trace'),
  backup: record('backup'),
  forget: record('forget'),
  migrateToPostgres: record('migrateToPostgres'),
  webhooksReplay: record('webhooksReplay'),
  retry: record('retry'),
};

async function leads(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => out.push(l), err: (l) => err.push(l), env: { DATABASE_PATH: '/srv/leads.sqlite', ...env } };
  calls.length = 0;
  const code = await runCli(argv, io, OPS);
  return { code, out, err };
}

describe('the CLI', () => {
  it('an unknown command: "unknown command \'X\'", exit 2, nothing run', async () => {
    for (const word of ['export', 'drop-database']) {
      const { code, err, out } = await leads([word, 'x']);
      expect({ code, err, out, calls }).toEqual({
        code: 2,
        err: [`error: unknown command '${word}'`, 'see: npm run leads -- --help'],
        out: [],
        calls: [],
      });
    }
    // A word close to a command gets a suggestion.
    expect((await leads(['tracee', '7'])).err).toEqual([
      "error: unknown command 'tracee'",
      '(Did you mean trace?)',
      'see: npm run leads -- --help',
    ]);
  });

  it("--help lists every command; a command's --help shows its usage and options", async () => {
    const top = await leads(['--help']);
    expect(top.code).toBe(0);
    expect(top.out[0]).toBe('Usage: npm run leads -- <command> [options]');
    for (const name of ['setup', 'doctor', 'trace', 'backup', 'forget', 'migrate-to-postgres', 'webhooks']) {
      expect(top.out.some((l) => l.trimStart().startsWith(name))).toBe(true);
    }
    const trace = await leads(['trace', '--help']);
    expect(trace.code).toBe(0);
    expect(trace.out[0]).toBe('Usage: npm run leads -- trace [options] <key>');
    expect(trace.out.join('\n')).toContain('--json');
    const setup = await leads(['help', 'setup']);
    expect(setup.out[0]).toBe('Usage: npm run leads -- setup [options]');
    expect(setup.out.join('\n')).toMatch(/--timeout <seconds>[\s\S]*--no-admin[\s\S]*--delete-webhook/);
    expect(calls).toEqual([]);
  });

  it('no command at all: the help on stderr, exit 2', async () => {
    const { code, out, err } = await leads([]);
    expect({ code, out, first: err[0] }).toEqual({ code: 2, out: [], first: 'Usage: npm run leads -- <command> [options]' });
  });

  it('usage errors in one line with a pointer to the help, exit 2', async () => {
    expect(await leads(['trace'])).toEqual({
      code: 2,
      out: [],
      err: ["error: missing required argument 'key'", 'see: npm run leads -- trace --help'],
    });
    expect((await leads(['trace', '42', '--verbose'])).err[0]).toBe("error: unknown option '--verbose'");
    expect((await leads(['trace', '42', '43'])).err[0]).toBe("error: too many arguments for 'trace'. Expected 1 argument but got 2.");
    expect(await leads(['forget'])).toEqual({
      code: 2,
      out: [],
      err: ['forget needs one of --phone <+7…> or --telegram <@name>', 'see: npm run leads -- forget --help'],
    });
    expect((await leads(['forget', '--phone', '+79161234567', '--telegram', '@anna'])).err[0]).toBe(
      'forget takes only one of --phone <+7…> or --telegram <@name>',
    );
    for (const timeout of ['soon', '0'])
      expect((await leads(['setup', '--timeout', timeout])).err[0]).toBe(
        `error: option '--timeout <seconds>' argument '${timeout}' is invalid. It must be whole seconds from 1.`,
      );
    expect((await leads(['webhooks', 'resend', '7'])).err).toEqual([
      "error: unknown command 'resend'",
      'see: npm run leads -- webhooks --help',
    ]);
    expect((await leads(['webhooks', 'replay'])).err).toEqual([
      "error: missing required argument 'key'",
      'see: npm run leads -- webhooks replay --help',
    ]);
    expect(calls).toEqual([]);
  });

  it('runs the command with what it was given and the database of the environment', async () => {
    expect((await leads(['trace', '7', '--json'])).code).toBe(0);
    expect(calls).toEqual([['trace', '/srv/leads.sqlite', '7', true]]);
    await leads(['trace', 'abc'], { DATABASE_URL: 'postgres://u@db/leads' });
    expect(calls).toEqual([['trace', 'postgres://u@db/leads', 'abc', false]]);
    await leads(['forget', '--telegram', '@anna'], { LEADS_IP_SALT: 'salt' });
    expect(calls).toEqual([['forget', '/srv/leads.sqlite', '--telegram', '@anna', expect.any(Number), 'salt']]);
    await leads(['webhooks', 'replay', 'evt_1']);
    expect(calls).toEqual([['webhooksReplay', '/srv/leads.sqlite', 'evt_1', []]]);
    // The URLs a replay may go to: the server's LEADS_WEBHOOK_URL, read as the server reads it.
    await leads(['webhooks', 'replay', '#3'], {
      LEADS_WEBHOOK_URL: 'https://crm.example.com/h?t=1',
      LEADS_WEBHOOK_SECRET: 'whsec_0123456789abcdef',
    });
    expect(calls).toEqual([
      ['webhooksReplay', '/srv/leads.sqlite', '#3', [{ url: 'https://crm.example.com/h?t=1', secret: 'whsec_0123456789abcdef' }]],
    ]);
    await leads(['retry']);
    expect(calls).toEqual([['retry', '/srv/leads.sqlite']]);
    await leads(['migrate-to-postgres'], { DATABASE_URL: 'postgres://u@db/leads' });
    expect(calls).toEqual([['migrateToPostgres', '/srv/leads.sqlite', 'postgres://u@db/leads']]);
    expect(await leads(['backup', '/tmp/x'], { DATABASE_URL: 'postgres://u@db/leads' })).toEqual({
      code: 2,
      out: [],
      err: ['backup copies the SQLite file; on PostgreSQL use pg_dump (docs/deployment.md)'],
    });
  });
});

describe('the database variables and a failing command', () => {
  it('are read as the server reads them: trimmed, and a DATABASE_URL it refuses is one line naming no password, exit 2', async () => {
    await leads(['trace', '7'], { DATABASE_PATH: ' /srv/leads.sqlite\r', DATABASE_URL: '  ' });
    expect(calls).toEqual([['trace', '/srv/leads.sqlite', '7', false]]);
    await leads(['trace', '7'], { DATABASE_URL: ' postgres://u:S3cret@db/leads ' });
    expect(calls).toEqual([['trace', 'postgres://u:S3cret@db/leads', '7', false]]);
    // LEADS_IP_SALT keys the erasure's hashes: with a secret file's newline kept, a late replay of the person went unrecognised.
    await leads(['forget', '--telegram', '@anna'], { LEADS_IP_SALT: ' salt\n' });
    expect(calls).toEqual([['forget', '/srv/leads.sqlite', '--telegram', '@anna', expect.any(Number), 'salt']]);
    for (const url of ['postgress://u:S3cret@db/leads', 'mysql://u:S3cret@db/leads']) {
      for (const argv of [
        ['trace', '7'],
        ['backup', '/tmp/b'],
        ['webhooks', 'replay', '7'],
        ['forget', '--telegram', '@anna'],
      ]) {
        expect({ argv, ...(await leads(argv, { DATABASE_URL: url })), calls }).toEqual({
          argv,
          code: 2,
          out: [],
          // Every line the CLI prints drops a URL's password, the example's too.
          err: ['DATABASE_URL must be a PostgreSQL URL like postgres://user@host:5432/leads (or unset for SQLite)'],
          calls: [],
        });
      }
    }
  });

  it("a command's failure is one line, passwords hidden, exit 1: never a stack trace", async () => {
    const failing: OpsCommands = {
      ...OPS,
      trace: () => Promise.reject(new Error('no connection to the database: connect ECONNREFUSED postgres://u:S3cret@db/leads')),
    };
    const err: string[] = [];
    const io: CliIo = { out: () => undefined, err: (l) => err.push(l), env: { DATABASE_PATH: '/srv/leads.sqlite' } };
    expect(await runCli(['trace', '7'], io, failing)).toBe(1);
    expect(err).toEqual(['no connection to the database: connect ECONNREFUSED postgres://u@db/leads']);
  });

  it("a database that is not the server's, one locked past the wait, or PostgreSQL not reached says what to do in that one line", async () => {
    const cases: [Error, string][] = [
      [
        new Error('no such table: leads'),
        "no such table: leads: is DATABASE_PATH or DATABASE_URL the server's database? (npm run leads -- doctor checks it)",
      ],
      [
        new Error('relation "leads" does not exist'),
        'relation "leads" does not exist: is DATABASE_PATH or DATABASE_URL the server\'s database? (npm run leads -- doctor checks it)',
      ],
      [
        Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }),
        'database is locked: the database is busy or away; run it again once it is free (fuser "$DATABASE_PATH" names a lock\'s holder)',
      ],
    ];
    // On PostgreSQL: no connection (a wrong password, a database that does not exist, the server down), or a lock.
    const postgres = { DATABASE_URL: 'postgres://leads:S3cret@db/leads' };
    const pgCases: [Error, string, Record<string, string>][] = [
      [
        Object.assign(new Error('no connection to the database: password authentication failed for user "leads" (28P01)'), {
          code: 'DATABASE_UNREACHABLE',
        }),
        'no connection to the database: password authentication failed for user "leads" (28P01): is PostgreSQL up, and are ' +
          "DATABASE_URL's host, user, password and database right? (npm run leads -- doctor checks it)",
        postgres,
      ],
      [
        Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' }),
        'canceling statement due to lock timeout: the database is busy or away; run it again once it is free',
        postgres,
      ],
    ];
    for (const [error, line, env] of [...cases.map(([e, l]) => [e, l, { DATABASE_PATH: '/srv/leads.sqlite' }] as const), ...pgCases]) {
      const err: string[] = [];
      const io: CliIo = { out: () => undefined, err: (l) => err.push(l), env };
      expect(await runCli(['forget', '--telegram', '@anna'], io, { ...OPS, forget: () => Promise.reject(error) })).toBe(1);
      expect(err).toEqual([line]);
    }
  });
});

describe('npm run leads and npm run start:server without a build', () => {
  const tmp = tempDir();
  afterAll(() => tmp.remove());
  const scripts = resolve(__dirname, '..', '..', 'scripts');

  /** A root script in a checkout of its own (`root`), as npm runs it: `leads.mjs trace 1`, or `start-server.mjs`. */
  function run(root: string, script = 'leads.mjs') {
    mkdirSync(join(root, 'scripts', 'lib'), { recursive: true });
    for (const file of [script, 'lib/built.mjs']) copyFileSync(join(scripts, file), join(root, 'scripts', file));
    const args = script === 'leads.mjs' ? ['trace', '1'] : [];
    return spawnSync(process.execPath, [join(root, 'scripts', script), ...args], { encoding: 'utf8' });
  }

  it('says to run npm run build first, in one line, exit 2', () => {
    const r = run(join(tmp.dir, 'fresh'));
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
      status: 2,
      stdout: '',
      stderr: 'the server is not built (no server/dist/cli.js): run npm run build first\n',
    });
    const server = run(join(tmp.dir, 'fresh'), 'start-server.mjs');
    expect({ status: server.status, stdout: server.stdout, stderr: server.stderr }).toEqual({
      status: 2,
      stdout: '',
      stderr: 'the server is not built (no server/dist/main.js): run npm run build first\n',
    });
  });

  it('an incomplete build (a module of it missing) and an older one say the same', () => {
    const broken = join(tmp.dir, 'broken');
    mkdirSync(join(broken, 'server', 'dist'), { recursive: true });
    writeFileSync(join(broken, 'server', 'dist', 'cli.js'), "require('./cli/program');");
    writeFileSync(join(broken, 'server', 'dist', 'main.js'), "require('./app');");
    const r = run(broken);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^the build is incomplete \(Cannot find module '\.\/cli\/program'\): run npm run build first\n$/);
    const server = run(broken, 'start-server.mjs');
    expect([server.status, server.stderr]).toEqual([
      2,
      expect.stringMatching(/^the build is incomplete \(Cannot find module '\.\/app'\): run/),
    ]);
    const old = join(tmp.dir, 'old');
    mkdirSync(join(old, 'server', 'dist'), { recursive: true });
    writeFileSync(join(old, 'server', 'dist', 'cli.js'), 'module.exports = {};');
    expect(run(old).stderr).toBe('the build is older than the sources (server/dist/cli.js has no cli()): run npm run build first\n');
  });

  it('start:server runs the built server in its own process: its output and its exit code', () => {
    const built = join(tmp.dir, 'built');
    mkdirSync(join(built, 'server', 'dist'), { recursive: true });
    writeFileSync(join(built, 'server', 'dist', 'main.js'), "console.log('listening'); process.exitCode = 3;");
    const r = run(built, 'start-server.mjs');
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 3, stdout: 'listening\n', stderr: '' });
  });

  it('start:server and start:landing: a SIGTERM to npm reaches the process it started (stopping npm stops it)', async () => {
    const root = join(tmp.dir, 'signals');
    mkdirSync(join(root, 'scripts'), { recursive: true });
    mkdirSync(join(root, 'landing'));
    // The real scripts of both package.json files, around stand-ins that say when they are up and when they get SIGTERM.
    const real = (path: string) =>
      JSON.parse(readFileSync(resolve(__dirname, '..', '..', path), 'utf8')) as { scripts: Record<string, string> };
    const { scripts } = real('package.json');
    const only = (keys: string[], from: Record<string, string>) => Object.fromEntries(keys.map((k) => [k, from[k]]));
    writeFileSync(
      join(root, 'package.json'),
      JSON.stringify({ name: 'r', workspaces: ['landing'], scripts: only(['start:server', 'start:landing'], scripts) }),
    );
    writeFileSync(
      join(root, 'landing', 'package.json'),
      JSON.stringify({ name: 'l', scripts: only(['start'], real('landing/package.json').scripts) }),
    );
    const standIn = (name: string) =>
      `process.on('SIGTERM', () => { require('fs').writeFileSync(${JSON.stringify(join(root, name))}, 'SIGTERM'); process.exit(0); });\n` +
      "setTimeout(() => process.exit(1), 20000); console.log('up');\n"; // an orphan (the test failing) ends by itself
    writeFileSync(join(root, 'scripts', 'start-server.cjs'), standIn('server.signal'));
    writeFileSync(join(root, 'scripts', 'start-server.mjs'), "import './start-server.cjs';\n");
    writeFileSync(join(root, 'landing', 'server.cjs'), standIn('landing.signal'));
    writeFileSync(join(root, 'landing', 'server.mjs'), "import './server.cjs';\n");
    for (const script of ['start:server', 'start:landing']) {
      const npm = spawn('npm', ['run', script], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((up) => npm.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('up') && up()));
      const exited = new Promise((done) => npm.on('exit', done));
      npm.kill('SIGTERM');
      await exited;
      const marker = join(root, script === 'start:server' ? 'server.signal' : 'landing.signal');
      expect([script, existsSync(marker) && readFileSync(marker, 'utf8')]).toEqual([script, 'SIGTERM']);
    }
  });
});
