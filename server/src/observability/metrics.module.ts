import { Module } from '@nestjs/common';
import { Metrics } from './metrics';

/** The counters registry, one for the app, imported by every module that counts (not global: who counts is visible). */
@Module({ providers: [Metrics], exports: [Metrics] })
export class MetricsModule {}
