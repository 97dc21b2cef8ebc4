import { Module } from '@nestjs/common';
import { InboxPageController } from './inbox-page.controller';
import { InboxPageFiles } from './inbox-page.files';

/** Serves the inbox's built page at `GET /inbox` and `/inbox/assets/*` (docs/inbox.md); without a build, 503. */
@Module({
  controllers: [InboxPageController],
  providers: [{ provide: InboxPageFiles, useFactory: () => new InboxPageFiles() }],
})
export class InboxPageModule {}
