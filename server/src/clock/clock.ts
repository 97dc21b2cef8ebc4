import { Global, Injectable, Module } from '@nestjs/common';

/** The time source. Every rule with a window or a delay reads it, so tests can move time instead of sleeping. */
@Injectable()
export class Clock {
  now(): number {
    return Date.now();
  }
}

@Global()
@Module({ providers: [Clock], exports: [Clock] })
export class ClockModule {}
