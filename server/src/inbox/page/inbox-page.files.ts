import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where the built page lives: `npm run build -w server` bundles `app/` with esbuild into `public/` beside the
 * compiled module (`server/dist/inbox/page/public`, also in the Docker image, which copies `server/dist`). Run from
 * sources (jest) there is no build, and the page answers 503 instead of failing the app's start.
 */
export const INBOX_PAGE_DIR = join(__dirname, 'public');

/**
 * The built page: its HTML, read once it exists (at the first request after the build: `npm run dev` builds the page
 * after the server's first compile, which empties `dist`), and the folder its assets are served from.
 */
export class InboxPageFiles {
  readonly assetsDir: string;
  private readonly index: string;
  private loaded: string | null = null;

  constructor(dir: string = INBOX_PAGE_DIR) {
    this.assetsDir = join(dir, 'assets');
    this.index = join(dir, 'index.html');
  }

  /** The page's HTML, or null while it is not built. */
  get html(): string | null {
    if (this.loaded === null && existsSync(this.index)) this.loaded = readFileSync(this.index, 'utf8');
    return this.loaded;
  }
}
