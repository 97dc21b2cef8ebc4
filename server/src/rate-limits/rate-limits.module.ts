import { Module } from '@nestjs/common';
import { RateEventsRepository } from './rate-events.repository';

@Module({ providers: [RateEventsRepository], exports: [RateEventsRepository] })
export class RateLimitsModule {}
