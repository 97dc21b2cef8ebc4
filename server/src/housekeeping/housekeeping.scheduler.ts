import { type BeforeApplicationShutdown, Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { SCHEDULED_JOBS } from '../clock/clock';
import { LeaseService } from '../cluster/lease.service';
import { HousekeepingService } from './housekeeping.service';

/** Thin: runs housekeeping once a minute; a run never overlaps the previous one. */
@Injectable()
export class HousekeepingScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private running: Promise<unknown> | null = null;

  constructor(
    @Inject(SCHEDULED_JOBS) private readonly scheduled: boolean,
    private readonly housekeeping: HousekeepingService,
    private readonly registry: SchedulerRegistry,
    private readonly leases: LeaseService,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.scheduled) return;
    this.registry.addInterval(
      'housekeeping',
      setInterval(() => void this.tick(), 60_000),
    );
  }

  tick(): Promise<unknown> {
    this.running ??= this.housekeeping.run().finally(() => (this.running = null));
    return this.running;
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.registry.doesExist('interval', 'housekeeping')) this.registry.deleteInterval('housekeeping');
    await this.running;
    // Another instance (or this one restarted) runs housekeeping at once instead of after the lease runs out.
    await this.leases.release('housekeeping').catch(() => undefined);
  }
}
