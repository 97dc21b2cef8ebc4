// The server's tests run in plain Node (jest-light-runner): TypeScript files load as CommonJS through
// @swc-node/register's require hook (decorators and their metadata as the build emits them), and the ESM loader
// that imports each test file hands `.ts` files to it.
import { createRequire, register } from 'node:module';

createRequire(import.meta.url)('@swc-node/register');
register(
  'data:text/javascript,' +
    encodeURIComponent(
      `export async function load(url, context, next) {
    return /\\.ts($|\\?)/.test(url) ? { format: 'commonjs', shortCircuit: true } : next(url, context);
  }`,
    ),
);
