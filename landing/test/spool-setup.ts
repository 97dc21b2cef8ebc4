/**
 * Every landing test file gets a spool directory of its own (LANDING_SPOOL_DIR), removed afterwards: a request that
 * falls back is written to the spool before the action answers, and it must not land in the working copy's ./data.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'landing-spool-test-'));
process.env.LANDING_SPOOL_DIR = join(dir, 'spool');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
