import { Injectable } from '@nestjs/common';

/** The time source. Every rule with a window or a delay reads it, so tests can move time instead of sleeping. */
@Injectable()
export class Clock {
  now(): number {
    return Date.now();
  }
}

/**
 * Whether interval-driven work (the outbox pass, housekeeping) runs by itself. False where the clock is moved by
 * hand (tests, the outage drill): nothing runs on an interval and the caller ticks.
 */
export const SCHEDULED_JOBS = Symbol('ScheduledJobs');
