#!/usr/bin/env node
// `npm run leads -- <command>`: the CLI of the built server (server/dist/cli.js). Without a build it says so in one
// line instead of Node's loader stack trace; with an incomplete or older build, likewise.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const cliPath = fileURLToPath(new URL('../server/dist/cli.js', import.meta.url));
const rebuild = (why) => {
  console.error(`${why}: run npm run build first`);
  process.exit(2);
};
if (!existsSync(cliPath)) rebuild('the server is not built (no server/dist/cli.js)');
let cli;
try {
  ({ cli } = createRequire(import.meta.url)(cliPath));
} catch (err) {
  if (err?.code !== 'MODULE_NOT_FOUND') throw err;
  rebuild(`the build is incomplete (${err.message.split('\n')[0]})`);
}
if (typeof cli !== 'function') rebuild('the build is older than the sources (server/dist/cli.js has no cli())');
process.exit(await cli(process.argv.slice(2)));
