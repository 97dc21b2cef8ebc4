import { Global, Module } from '@nestjs/common';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { CATALOGUES, type Messages } from './index';

/** The injection token of the catalogue LEADS_LOCALE chose: `@Inject(MESSAGES) private readonly t: Messages`. */
export const MESSAGES = Symbol('Messages');

/** The texts the group and the admin chat see, in the configured locale, for every feature. */
@Global()
@Module({
  providers: [{ provide: MESSAGES, useFactory: (config: ServerConfig): Messages => CATALOGUES[config.locale], inject: [SERVER_CONFIG] }],
  exports: [MESSAGES],
})
export class I18nModule {}
