import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The built page (`npm run build -w server` bundles it into `public/` beside this compiled module, in `server/dist`;
 * from sources, as in jest, there is none and the page answers 503): its HTML, read once it exists (`npm run dev`
 * builds the page after the server's first compile, which empties `dist`), and the folder of its assets.
 */
export class InboxPageFiles {
  readonly assetsDir: string;
  private readonly index: string;
  private loaded: string | null = null;

  constructor(dir = join(__dirname, 'public')) {
    this.assetsDir = join(dir, 'assets');
    this.index = join(dir, 'index.html');
  }

  /** The page's HTML, or null while it is not built. */
  get html(): string | null {
    if (this.loaded === null && existsSync(this.index)) this.loaded = readFileSync(this.index, 'utf8');
    return this.loaded;
  }
}
