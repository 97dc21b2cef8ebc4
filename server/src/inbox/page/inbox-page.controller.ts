import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { InboxPageFiles } from './inbox-page.files';

/**
 * What a browser gets for the page: nothing but this deployment's own files (connect, scripts and styles from 'self'),
 * so the page works offline and behind a strict policy. No frame-ancestors: Telegram's web clients frame the page.
 */
const PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join('; ');

const NOT_BUILT_HTML =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Inbox unavailable</title></head>' +
  '<body><h1>The inbox page is not built</h1><p>Run <code>npm run build -w server</code> and restart the server.</p></body></html>';

/**
 * The inbox's page: `GET /inbox` (the HTML) and `GET /inbox/assets/:file` (its bundled script and styles). Not one
 * of the API's operations, so it stays out of the OpenAPI document; the page's data comes from `/inbox/api/*`.
 */
@ApiExcludeController()
@Controller('inbox')
export class InboxPageController {
  constructor(private readonly files: InboxPageFiles) {}

  @Get()
  index(@Res() res: Response): void {
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Content-Security-Policy', PAGE_POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    if (this.files.html === null) {
      res.status(503).type('html').send(NOT_BUILT_HTML);
      return;
    }
    res.status(200).type('html').send(this.files.html);
  }

  /** Asset names carry their content's hash (the build's), so a browser may keep them for a year. */
  @Get('assets/:file')
  asset(@Param('file') file: string, @Res() res: Response): void {
    res.sendFile(file, { root: this.files.assetsDir, dotfiles: 'deny', immutable: true, maxAge: '365d' }, (err) => {
      if (err && !res.headersSent) res.status(404).json({ error: 'not_found' });
    });
  }
}
