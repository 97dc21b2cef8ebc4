import { rmSync } from 'node:fs';
import type { JestRun } from './global-setup';

const KEY = Symbol.for('stickers-leads.jest-run');

export default async function globalTeardown(): Promise<void> {
  const run = (globalThis as { [KEY]?: JestRun })[KEY];
  if (!run) return;
  rmSync(run.templates, { recursive: true, force: true });
  await run.pg?.stop();
}
