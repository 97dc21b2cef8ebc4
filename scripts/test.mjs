#!/usr/bin/env node
// Runs every test suite in order and ends with one plain line "tests: N passed, M failed" that CI can read.
// Each runner writes a JSON report; the counts come from there, not from parsing their screens.
// Before the suites it checks what they need from the machine (PostgreSQL binaries, a Chromium), saying in one line
// each what it uses; as root on Debian it installs Debian's chromium when there is no browser, and otherwise it stops
// with one line saying what to install, before any suite runs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { checkMachine } from './lib/machine-check.mjs';

const root = new URL('..', import.meta.url).pathname;
const reports = join(root, '.cache', 'test-reports');
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });

/** The server's test files that take their database from the harness (and so run again on PostgreSQL). */
function databaseTests() {
  const dir = join(root, 'server', 'test');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts'))
    .filter((f) => /from '\.\/(harness|support\/test-database)'/.test(readFileSync(join(dir, f), 'utf8')))
    .map((f) => `test/${f}`);
}

/** The end-to-end file that runs `npm run dev`. */
const DEV_TESTS = 'e2e/operations.e2e.test.mjs';

function e2eFiles() {
  return readdirSync(join(root, 'e2e'))
    .filter((f) => f.endsWith('.e2e.test.mjs'))
    .map((f) => `e2e/${f}`);
}

/** A node:test suite: the spec on the screen, TAP into the reports for the counts. */
function nodeTests(name, args) {
  return {
    name,
    cmd: [
      'node',
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${join(reports, `${name}.tap`)}`,
      ...args,
    ],
    cwd: '.',
    tap: true,
  };
}

/** A tool's own executable (not `npx`, which would not pass on the signal that stops a suite that hangs). */
const bin = (tool) => join(root, 'node_modules', '.bin', tool);

const only = process.argv.slice(2);
const SUITE_TIMEOUT_MS = 15 * 60_000;
const suites = [
  {
    name: 'shared',
    cmd: [bin('vitest'), 'run', '--reporter=default', '--reporter=json', `--outputFile=${join(reports, 'shared.json')}`],
    cwd: 'shared',
  },
  // Two workers: the server's tests mostly wait on HTTP, timers and the databases, so two files at a time finish in
  // about half the time even on two cores (jest's default there is one).
  { name: 'server', cmd: [bin('jest'), '--maxWorkers=2', '--json', `--outputFile=${join(reports, 'server.json')}`], cwd: 'server' },
  // The same server tests on PostgreSQL: the harness gives each test a database on one throwaway server.
  // Only the files that take their database from the harness: the unit tests under src/ use fakes, and the files that
  // never ask for one (the sandbox's, the architecture's, the migrations' own PostgreSQL) would only run again.
  {
    name: 'server-postgres',
    cmd: [
      bin('jest'),
      '--maxWorkers=2',
      '--json',
      `--outputFile=${join(reports, 'server-postgres.json')}`,
      '--runTestsByPath',
      ...databaseTests(),
    ],
    cwd: 'server',
    env: { LEADS_TEST_DATABASE: 'postgres' },
  },
  {
    name: 'landing',
    cmd: [bin('vitest'), 'run', '--reporter=default', '--reporter=json', `--outputFile=${join(reports, 'landing.json')}`],
    cwd: 'landing',
  },
  // The processes and browsers of the end-to-end tests mostly wait (on timers, HTTP, Chromium), so two files run at a
  // time. Not the file that runs `npm run dev`: that command rebuilds shared/ and sandbox/, whose dist/ the others load.
  nodeTests('e2e', ['--test-concurrency=2', ...e2eFiles().filter((f) => f !== DEV_TESTS)]),
  nodeTests('e2e-dev', [DEV_TESTS]),
].filter((s) => only.length === 0 || only.includes(s.name));

const wants = (...names) => suites.some((s) => names.includes(s.name));
const { problems } = checkMachine({
  // The server's tests on both databases (some tests on SQLite start a PostgreSQL of their own) and the e2e cluster test.
  postgres: wants('server', 'server-postgres', 'e2e', 'e2e-dev'),
  browser: wants('e2e', 'e2e-dev'),
});
if (problems.length > 0) {
  for (const line of problems) console.log(line);
  console.log('tests not run: the machine lacks what the suites need (above)');
  process.exit(1);
}

/** node:test's TAP summary ("# pass N", "# fail N") as the counts the JSON reporters give. */
function readTap(file) {
  const text = readFileSync(file, 'utf8');
  const count = (what) => Number(new RegExp(`^# ${what} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { numPassedTests: count('pass'), numFailedTests: count('fail') + count('cancelled'), numTotalTests: count('tests') };
}

let passed = 0;
let failed = 0;
let broken = [];
for (const suite of suites) {
  console.log(`\n=== ${suite.name} tests ===`);
  const started = Date.now();
  const run = spawnSync(suite.cmd[0], suite.cmd.slice(1), {
    cwd: join(root, suite.cwd),
    stdio: 'inherit',
    env: { ...process.env, ...suite.env },
    // A hung test ends its suite, failed, rather than the run (the server's runner has no per-test timeout).
    timeout: SUITE_TIMEOUT_MS,
  });
  if (run.error?.code === 'ETIMEDOUT') console.log(`${suite.name}: stopped after ${SUITE_TIMEOUT_MS / 60_000} minutes`);
  let report;
  try {
    report = suite.tap
      ? readTap(join(reports, `${suite.name}.tap`))
      : JSON.parse(readFileSync(join(reports, `${suite.name}.json`), 'utf8'));
  } catch {
    report = null;
  }
  const p = report?.numPassedTests ?? 0;
  const f = report?.numFailedTests ?? 0;
  passed += p;
  failed += f;
  if (run.status !== 0 || !report || (report.numTotalTests ?? 0) === 0) broken.push(suite.name);
  console.log(`=== ${suite.name}: ${p} passed, ${f} failed in ${((Date.now() - started) / 1000).toFixed(1)} s ===`);
}
console.log(`\ntests: ${passed} passed, ${failed} failed`);
if (broken.length > 0) {
  console.log(`suites that failed or ran nothing: ${broken.join(', ')}`);
  process.exit(1);
}
