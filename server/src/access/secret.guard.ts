import { type CanActivate, type ExecutionContext, Inject, Injectable, Logger } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { API_ERRORS, SECRET_HEADER } from '@stickers/shared';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { isStorageError } from '../database/write-health';
import { SecretLockout } from './secret-lockout';
import { VisitorHasher } from './visitor-hasher';
import { ApiError, rateLimited } from '../http/api-error';
import { callerAddress } from '../http/caller-address';

/** §1.1 steps 1–3, before the body is read: module off 404, locked out 429 `secret`, wrong secret 401 (counted). */
@Injectable()
export class SecretGuard implements CanActivate {
  private readonly logger = new Logger('LeadsAccess');
  /** A connection's caller hash, once per connection (its address never changes). */
  private readonly callerHashes = new WeakMap<object, string>();

  constructor(
    @Inject(SERVER_CONFIG) private readonly config: ServerConfig,
    private readonly hasher: VisitorHasher,
    private readonly lockout: SecretLockout,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<IncomingMessage>();
    if (!this.config.leads.enabled) throw new ApiError(404, { error: API_ERRORS.notFound });
    let callerHash = this.callerHashes.get(req.socket);
    if (callerHash === undefined) {
      callerHash = this.hasher.caller(callerAddress(req));
      this.callerHashes.set(req.socket, callerHash);
    }
    // A lockout that cannot be read now is a storage error: the app's filter answers it 503, as the submit's.
    const seconds = await this.lockout.retryAfterSec(callerHash);
    if (seconds !== null) throw rateLimited('secret', seconds);
    const given = req.headers[SECRET_HEADER.toLowerCase()];
    if (this.hasher.secretMatches(typeof given === 'string' ? given : undefined)) return true;
    // A failure that cannot be counted now (the database is away) is still a 401.
    await this.lockout.recordFailure(callerHash).catch((err: unknown) => {
      if (!isStorageError(err)) throw err;
      this.logger.warn({ msg: 'wrong secret not counted: the database is unavailable' });
    });
    this.logger.warn({ msg: 'wrong or missing secret header' });
    throw new ApiError(401, { error: API_ERRORS.unauthorized });
  }
}
