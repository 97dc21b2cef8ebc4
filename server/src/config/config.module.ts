import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { ServerConfig } from './config';

export const SERVER_CONFIG = Symbol('ServerConfig');

/** The configuration, loaded and checked once before the app is built (see main.ts). */
@Global()
@Module({})
export class ConfigModule {
  static register(config: ServerConfig): DynamicModule {
    return {
      module: ConfigModule,
      providers: [{ provide: SERVER_CONFIG, useValue: config }],
      exports: [SERVER_CONFIG],
    };
  }
}
