import { type DynamicModule, Global, Module } from '@nestjs/common';
import type { ServerConfig } from './config';

export const SERVER_CONFIG = Symbol('ServerConfig');

@Global()
@Module({})
export class ConfigModule {
  static register(config: ServerConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: SERVER_CONFIG, useValue: config }], exports: [SERVER_CONFIG] };
  }
}
