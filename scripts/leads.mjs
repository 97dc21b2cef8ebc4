#!/usr/bin/env node
// `npm run leads -- <command>`: the CLI of the built server (server/dist/cli.js). Without a build it says so in one
// line instead of Node's loader stack trace; with an incomplete or older build, likewise.
import { loadBuilt, rebuild } from './lib/built.mjs';

const { cli } = loadBuilt('cli.js');
if (typeof cli !== 'function') rebuild('the build is older than the sources (server/dist/cli.js has no cli())');
process.exit(await cli(process.argv.slice(2)));
