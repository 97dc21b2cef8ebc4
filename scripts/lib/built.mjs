// The built server's entry points for the root's npm scripts (`npm run leads`, `npm run start:server`): without a build,
// or with an incomplete one (a failed `npm run dev` can leave server/dist half empty), one line saying to build instead
// of Node's loader stack trace, and exit 2.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** One line and exit 2: `why`, then what to do. */
export function rebuild(why) {
  console.error(`${why}: run npm run build first`);
  process.exit(2);
}

/** Loads server/dist/<file> (CommonJS) and gives its exports; exits through `rebuild` when it or a module it needs is missing. */
export function loadBuilt(file) {
  const path = fileURLToPath(new URL(`../../server/dist/${file}`, import.meta.url));
  if (!existsSync(path)) rebuild(`the server is not built (no server/dist/${file})`);
  try {
    return createRequire(import.meta.url)(path);
  } catch (err) {
    if (err?.code !== 'MODULE_NOT_FOUND') throw err;
    rebuild(`the build is incomplete (${err.message.split('\n')[0]})`);
  }
}
