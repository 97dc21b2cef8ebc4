// The Chromium the browser tests drive (playwright-core never downloads a browser here): CHROMIUM_PATH when it is set,
// else the first of the usual system locations that exists. The one place that knows where to look: e2e/stack.mjs uses
// it, and scripts/test.mjs checks it before the suites (and, as root on Debian, installs Debian's chromium when there
// is none: installChromium()).
// CommonJS so that the ES modules of e2e/ and scripts/ and any CommonJS caller can load it.
'use strict';
const { accessSync, constants } = require('node:fs');
const { spawnSync } = require('node:child_process');

const LOCATIONS = [
  '/usr/bin/chromium', // Debian's chromium
  '/usr/bin/chromium-browser', // Ubuntu's, Fedora's, Alpine's
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/opt/google/chrome/chrome',
  '/snap/bin/chromium',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
];

/** What to install, said in one line. */
const HOW_TO_INSTALL =
  'install Chromium (Debian: apt-get install chromium; Ubuntu: apt-get install chromium-browser) or set CHROMIUM_PATH to a Chromium or Chrome';

const executable = (path) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * The browser to drive.
 * @param {NodeJS.ProcessEnv} [env] where CHROMIUM_PATH is read
 * @param {string[]} [locations] where to look without it
 * @returns {{ path: string, from: string } | { path: null, why: string }} `from`: CHROMIUM_PATH or "system";
 *   `why`: where it looked and what to install, in one line.
 */
function findChromium(env = process.env, locations = LOCATIONS) {
  const set = env.CHROMIUM_PATH?.trim();
  if (set) {
    return executable(set) ? { path: set, from: 'CHROMIUM_PATH' } : { path: null, why: `CHROMIUM_PATH=${set} is not an executable file` };
  }
  const path = locations.find(executable);
  if (path) return { path, from: 'system' };
  return { path: null, why: `no Chromium found (CHROMIUM_PATH unset; looked at ${locations.join(', ')}): ${HOW_TO_INSTALL}` };
}

/** The browser's path; throws the one line of findChromium() when there is none. */
function chromiumPath(env = process.env) {
  const found = findChromium(env);
  if (!found.path) throw new Error(`browser tests: ${found.why}`);
  return found.path;
}

/** `chromium --version`, or null when it does not run (e.g. libraries missing). */
function chromiumVersion(path) {
  const result = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return result.status === 0 ? result.stdout.trim() : null;
}

/**
 * Whether this machine can get Debian's chromium by itself: root, apt-get present (Debian or a derivative), and
 * CHROMIUM_PATH unset (a path the caller chose is not replaced by another browser).
 */
function canInstallChromium(env = process.env) {
  return process.platform === 'linux' && process.getuid?.() === 0 && !env.CHROMIUM_PATH?.trim() && executable('/usr/bin/apt-get');
}

/**
 * apt-get update, then apt-get install chromium and fonts-noto-color-emoji (the sandbox page's cards show emoji), quietly.
 * @returns {{ ok: true } | { ok: false, why: string }}
 */
function installChromium() {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  // Another apt-get or dpkg running (an unattended upgrade, a provisioning script) holds the lock: wait for it, up to
  // 5 minutes, instead of failing at once with "Could not get lock".
  const wait = ['-o', 'DPkg::Lock::Timeout=300'];
  const steps = [
    ['apt-get', [...wait, 'update', '-qq']],
    ['apt-get', [...wait, 'install', '-y', '-qq', 'chromium', 'fonts-noto-color-emoji']],
  ];
  for (const [file, args] of steps) {
    const result = spawnSync(file, args, { env, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    if (result.status !== 0) {
      const why = (result.error?.message ?? result.stderr ?? '').trim().split('\n').slice(-3).join(' / ');
      return { ok: false, why: `${file} ${args.join(' ')} failed (exit ${result.status}): ${why}` };
    }
  }
  return { ok: true };
}

module.exports = { findChromium, chromiumPath, chromiumVersion, canInstallChromium, installChromium, LOCATIONS, HOW_TO_INSTALL };
