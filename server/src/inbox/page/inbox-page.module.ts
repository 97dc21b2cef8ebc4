import { Module } from '@nestjs/common';
import { InboxPageController } from './inbox-page.controller';
import { InboxPageFiles } from './inbox-page.files';

/**
 * Serves the inbox's built page at `GET /inbox` and `/inbox/assets/*` (see docs/inbox.md). A missing build answers
 * 503 with a line saying how to build it; the rest of the app is unaffected.
 */
@Module({
  controllers: [InboxPageController],
  providers: [{ provide: InboxPageFiles, useFactory: () => new InboxPageFiles() }],
})
export class InboxPageModule {}
