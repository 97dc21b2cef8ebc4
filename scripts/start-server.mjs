#!/usr/bin/env node
// `npm run start:server`: the built server (server/dist/main.js) in this process, so its signals and exit code are the
// server's. Without a build, or with an incomplete one, one line saying to build first, exit 2.
import { loadBuilt } from './lib/built.mjs';

loadBuilt('main.js');
