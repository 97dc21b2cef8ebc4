import { Global, Module } from '@nestjs/common';
import { Clock, SCHEDULED_JOBS } from './clock';

/** Global: every feature reads the time; the interval-driven jobs' switch lives with it. */
@Global()
@Module({
  providers: [Clock, { provide: SCHEDULED_JOBS, useValue: true }],
  exports: [Clock, SCHEDULED_JOBS],
})
export class ClockModule {}
