// Builds the inbox's page (docs/inbox.md): bundles main.ts and styles.css with esbuild into
// server/dist/inbox/page/public/assets/ under names carrying their content's hash, then writes index.html naming them.
// Run by `npm run build -w server` after the nest build (which empties server/dist first). The page imports the
// lead statuses and their transitions from the server's own src/domain/ files, so both say the same.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '../dist/inbox/page/public');

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });
const result = await build({
  entryPoints: [join(here, 'main.ts'), join(here, 'styles.css')],
  outdir: join(out, 'assets'),
  entryNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  sourcemap: false,
  format: 'esm',
  target: ['chrome109', 'safari15', 'firefox115'],
  tsconfig: join(here, 'tsconfig.json'),
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file));
const script = outputs.find((name) => name.startsWith('main-') && name.endsWith('.js'));
const styles = outputs.find((name) => name.startsWith('styles-') && name.endsWith('.css'));
if (!script || !styles) throw new Error(`inbox page build: expected main-*.js and styles-*.css, got ${outputs.join(', ')}`);
const html = readFileSync(join(here, 'index.html'), 'utf8').replace('%SCRIPT%', script).replace('%STYLES%', styles);
writeFileSync(join(out, 'index.html'), html);
console.log(`inbox page built: ${join(out, 'index.html')} (${script}, ${styles})`);
