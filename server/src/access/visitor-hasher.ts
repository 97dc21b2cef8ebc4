import { createHmac, timingSafeEqual, createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';

/** The only place that sees a raw IP address (§1.5): HMAC-SHA256 under LEADS_IP_SALT, the lockout's in its own namespace. */
@Injectable()
export class VisitorHasher {
  private readonly secretDigest: Buffer;

  constructor(@Inject(SERVER_CONFIG) private readonly config: ServerConfig) {
    this.secretDigest = createHash('sha256').update(config.leads.secret).digest();
  }

  visitor(ip: string): string {
    return createHmac('sha256', this.config.leads.ipSalt).update(ip).digest('hex');
  }

  caller(ip: string): string {
    return createHmac('sha256', this.config.leads.ipSalt).update(`caller:${ip}`).digest('hex');
  }

  /** The secret is compared in constant time (docs/requirements.md §1.1 step 3). Digests first, so lengths never leak. */
  secretMatches(given: string | undefined): boolean {
    if (given === undefined) return false;
    const a = createHash('sha256').update(given).digest();
    return timingSafeEqual(a, this.secretDigest) && this.config.leads.secret !== '';
  }
}
