// What the test suites need from the machine, checked before any of them runs (scripts/test.mjs): the PostgreSQL
// binaries the server's tests on both databases and the e2e cluster test start a server from, and a Chromium for the
// browser tests. One line each says what is used; with no browser, where this machine can get Debian's chromium by
// itself (root, apt-get, CHROMIUM_PATH unset) it says so in one line and installs it; otherwise each missing thing is
// one line saying what to install, and the caller stops before the suites.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * @param {{ postgres: boolean, browser: boolean, log?: (line: string) => void,
 *   pg?: { checkPostgres(): { dir: string, source: string, version: string } },
 *   chromium?: typeof import('./chromium.cjs') }} what which checks (the suites asked for), and the pieces (for tests)
 * @returns {{ problems: string[] }} one line per missing thing; none when the suites can run
 */
export function checkMachine({ postgres, browser, log = console.log, pg, chromium }) {
  const problems = [];
  if (postgres) {
    const { checkPostgres } = pg ?? require('./throwaway-postgres.cjs');
    try {
      const found = checkPostgres();
      log(`PostgreSQL for the tests: ${found.version} (${found.source === 'npm' ? 'the npm package' : found.source}: ${found.dir})`);
    } catch (err) {
      problems.push(`PostgreSQL for the tests: ${err.message}`);
    }
  }
  if (browser) {
    const { findChromium, chromiumVersion, canInstallChromium, installChromium } = chromium ?? require('./chromium.cjs');
    let found = findChromium();
    if (!found.path && canInstallChromium()) {
      log(`browser: none found; installing Debian's chromium and fonts-noto-color-emoji (apt-get, as root)…`);
      const installed = installChromium();
      found = installed.ok ? findChromium() : { path: null, why: `${found.why} (installing it failed: ${installed.why})` };
    }
    if (!found.path) {
      problems.push(`browser: ${found.why}`);
    } else {
      const version = chromiumVersion(found.path);
      if (version) log(`browser: ${version} (${found.path})`);
      else problems.push(`browser: ${found.path} --version failed (a missing library?): reinstall it or set CHROMIUM_PATH`);
    }
  }
  return { problems };
}
