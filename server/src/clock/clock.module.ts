import { Global, Module } from '@nestjs/common';
import { Clock, SCHEDULED_JOBS } from './clock';

/**
 * Global: every feature reads the time. The switch of the interval-driven jobs lives here too, as it belongs to how
 * time passes (tests that move the clock by hand turn it off), so no other module has to be global to carry it.
 */
@Global()
@Module({
  providers: [Clock, { provide: SCHEDULED_JOBS, useValue: true }],
  exports: [Clock, SCHEDULED_JOBS],
})
export class ClockModule {}
