import { Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { type LeaseName, LeaseService } from './lease.service';

/**
 * The start and end of a pass feature (the outbox, housekeeping): an interval in Nest's scheduler registry; at
 * shutdown the interval gone, the running pass ended, then the lease handed back so another instance takes it at once.
 */
@Injectable()
export class PassSchedule {
  constructor(
    private readonly registry: SchedulerRegistry,
    private readonly leases: LeaseService,
  ) {}

  /** `tick` every `everyMs`, under the interval `name`. */
  every(name: LeaseName, everyMs: number, tick: () => Promise<unknown>): void {
    this.registry.addInterval(
      name,
      setInterval(() => void tick(), everyMs),
    );
  }

  /** Shutdown: no more ticks, `stopAndWait` (stop the runner, wait for its pass), then the lease `name` released. */
  async end(name: LeaseName, stopAndWait: () => Promise<unknown>): Promise<void> {
    if (this.registry.doesExist('interval', name)) this.registry.deleteInterval(name);
    await stopAndWait();
    await this.leases.release(name).catch(() => undefined);
  }
}
