import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { LeasesRepository } from '../repositories/leases.repository';

/** How long a lease lasts and how often its holder renews it; tests shorten both. */
export interface LeaseTimings {
  ttlMs: number;
  renewMs: number;
}
export const LEASE_TIMINGS = Symbol('LeaseTimings');
/** 45 s, renewed every 15 s: a dead holder is replaced within a minute, and a live one survives two failed renewals. */
export const DEFAULT_LEASE_TIMINGS: LeaseTimings = { ttlMs: 45_000, renewMs: 15_000 };

/** How long a refusal is remembered (at most one renewal period): asking again at once only adds a write. */
const DENIAL_MEMORY_MS = 2000;

export type LeaseName = 'outbox' | 'housekeeping' | 'telegram-polling';

/** Leases of the jobs that run on one instance at a time; wall-clock time (a lease is about whether a process is alive). */
@Injectable()
export class LeaseService {
  /** This app as a holder: host, pid, process start, and a random part (two apps in one process are two instances). */
  readonly instanceId = `${hostname()}:${process.pid}:${PROCESS_STARTED}:${randomBytes(3).toString('hex')}`;
  private readonly heldUntil = new Map<LeaseName, number>();
  private readonly deniedAt = new Map<LeaseName, number>();

  constructor(
    private readonly leases: LeasesRepository,
    @Inject(LEASE_TIMINGS) readonly timings: LeaseTimings,
    private readonly registry: SchedulerRegistry,
  ) {}

  every(name: LeaseName, everyMs: number, tick: () => Promise<unknown>): void {
    this.registry.addInterval(
      name,
      setInterval(() => void tick(), everyMs),
    );
  }

  /** Shutdown: no more ticks, the runner stopped and its pass over, then the lease handed back at once. */
  async end(name: LeaseName, stopAndWait: () => Promise<unknown>): Promise<void> {
    if (this.registry.doesExist('interval', name)) this.registry.deleteInterval(name);
    await stopAndWait();
    await this.release(name).catch(() => undefined);
  }

  /** Takes or renews `name` for this instance; false while another live instance holds it. Database errors propagate. */
  async take(name: LeaseName): Promise<boolean> {
    const now = Date.now();
    const denied = this.deniedAt.get(name);
    if (denied !== undefined && now - denied < Math.min(this.timings.renewMs, DENIAL_MEMORY_MS)) return false;
    const until = now + this.timings.ttlMs;
    let granted = await this.leases.acquire(name, this.instanceId, now, until);
    if (!granted) {
      // A holder on this host whose process is gone (killed, and restarted as this one): no need to wait for its lease.
      const current = await this.leases.holderOf(name);
      if (current && holderIsDead(current.holder, this.instanceId))
        granted = await this.leases.acquire(name, this.instanceId, now, until, current.holder);
    }
    if (granted) {
      this.heldUntil.set(name, until);
      this.deniedAt.delete(name);
    } else {
      this.heldUntil.delete(name);
      this.deniedAt.set(name, now);
    }
    return granted;
  }

  /** Whether this instance still holds `name` by its own reckoning, with a margin of one renewal period. */
  holds(name: LeaseName): boolean {
    return Date.now() < (this.heldUntil.get(name) ?? 0) - this.timings.renewMs;
  }

  /** Gives `name` up, so another instance takes it without waiting. */
  async release(name: LeaseName): Promise<void> {
    this.heldUntil.delete(name);
    await this.leases.release(name, this.instanceId);
  }
}

/** With the pid, it tells this process from an earlier one of that pid. */
const PROCESS_STARTED = Math.round(Date.now() - process.uptime() * 1000);

/** `holder` (host:pid:started:random) names a process of this host that no longer runs; another host's is never judged. */
export function holderIsDead(holder: string, self: string): boolean {
  const [host, pid, started] = holder.split(':');
  const [ownHost, ownPid, ownStarted] = self.split(':');
  if (host !== ownHost || !/^\d+$/.test(pid ?? '')) return false;
  // Our pid: an earlier process if it started more than a moment apart from this one (uptime is read with jitter).
  if (pid === ownPid) return Math.abs(Number(started) - Number(ownStarted)) > 1000;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
