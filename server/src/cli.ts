#!/usr/bin/env node
import { errorText } from '@stickers/shared';
import type { CliIo } from './cli/cli-io';
import * as ops from './cli/ops';
import { runCli } from './cli/program';

/** `npm run leads -- <command>` with the process's streams; resolves with the exit code (scripts/leads.mjs calls it). */
export function cli(argv: string[]): Promise<number> {
  const interrupted = new AbortController();
  // Setup waits for the operator: the first Ctrl-C makes it stop and hand polling back; a second one ends the process.
  if (argv[0] === 'setup') {
    process.once('SIGINT', () => {
      interrupted.abort();
      process.once('SIGINT', () => process.exit(130));
    });
  }
  const io: CliIo = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
    stdin: process.stdin,
    signal: interrupted.signal,
  };
  return runCli(argv, io, ops);
}

if (require.main === module) {
  cli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(errorText(err));
      process.exit(2);
    },
  );
}
