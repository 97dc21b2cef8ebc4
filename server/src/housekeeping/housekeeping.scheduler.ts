import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Clock, SCHEDULED_JOBS } from '../clock/clock';
import { PassSchedule } from '../cluster/pass-schedule';
import { PassRunner } from '../cluster/pass-runner';
import { type HousekeepingReport, HousekeepingService } from './housekeeping.service';

/**
 * Runs housekeeping once a minute; a run never overlaps the previous one, and the last one ends before the shutdown
 * goes on. The run takes its lease itself, and a failed job is tried again the next minute.
 */
@Injectable()
export class HousekeepingScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Housekeeping');
  private readonly runner: PassRunner;
  /** The report of the run that ended last (null while none has, or when it threw). */
  private report: HousekeepingReport | null = null;

  constructor(
    @Inject(SCHEDULED_JOBS) private readonly scheduled: boolean,
    private readonly housekeeping: HousekeepingService,
    private readonly passes: PassSchedule,
    clock: Clock,
  ) {
    this.runner = new PassRunner({
      clock,
      pass: async () => {
        this.report = null;
        this.report = await this.housekeeping.run();
      },
      onFailure: (err) => this.logger.error({ msg: 'housekeeping run failed', error: err instanceof Error ? err.message : String(err) }),
    });
  }

  onApplicationBootstrap(): void {
    if (!this.scheduled) return;
    this.passes.every('housekeeping', 60_000, () => this.tick());
  }

  /** One run now, or the running one (no overlap); resolves with its report. */
  async tick(): Promise<HousekeepingReport | null> {
    await this.runner.tick();
    return this.report;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.passes.end('housekeeping', () => this.runner.stopAndWait());
  }
}
