import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where the built page lives: `npm run build -w server` bundles `app/` with esbuild into `public/` beside the
 * compiled module (`server/dist/inbox/page/public`, also in the Docker image, which copies `server/dist`). Run from
 * sources (jest) there is no build, and the page answers 503 instead of failing the app's start.
 */
export const INBOX_PAGE_DIR = join(__dirname, 'public');

/** The built page: its HTML read once at start, and the folder its assets are served from. */
export class InboxPageFiles {
  readonly assetsDir: string;
  readonly html: string | null;

  constructor(dir: string = INBOX_PAGE_DIR) {
    this.assetsDir = join(dir, 'assets');
    const index = join(dir, 'index.html');
    this.html = existsSync(index) ? readFileSync(index, 'utf8') : null;
  }
}
