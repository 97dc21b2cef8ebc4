#!/usr/bin/env node
// Runs every test suite in order and ends with one plain line "tests: N passed, M failed" that CI can read.
// Each runner writes a JSON report; the counts come from there, not from parsing their screens.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const reports = join(root, '.cache', 'test-reports');
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });

const only = process.argv.slice(2);
const suites = [
  { name: 'shared', cmd: ['npx', 'vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile=${join(reports, 'shared.json')}`], cwd: 'shared' },
  { name: 'server', cmd: ['npx', 'jest', '--json', `--outputFile=${join(reports, 'server.json')}`], cwd: 'server' },
].filter((s) => only.length === 0 || only.includes(s.name));

let passed = 0;
let failed = 0;
let broken = [];
for (const suite of suites) {
  console.log(`\n=== ${suite.name} tests ===`);
  const started = Date.now();
  const run = spawnSync(suite.cmd[0], suite.cmd.slice(1), { cwd: join(root, suite.cwd), stdio: 'inherit', env: process.env });
  let report;
  try {
    report = JSON.parse(readFileSync(join(reports, `${suite.name}.json`), 'utf8'));
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
