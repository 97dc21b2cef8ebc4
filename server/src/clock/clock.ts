import { Injectable } from '@nestjs/common';

/** The time source. Every rule with a window or a delay reads it, so tests can move time instead of sleeping. */
@Injectable()
export class Clock {
  now(): number {
    return Date.now();
  }
}

/** Whether interval-driven work (the outbox, housekeeping) runs by itself; false where the clock is moved by hand. */
export const SCHEDULED_JOBS = Symbol('ScheduledJobs');
