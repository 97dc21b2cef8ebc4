import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/**
 * `Cache-Control: no-store` on every `/inbox/api/*` answer, refusals and errors included (set before the route's guard
 * runs, so a 401 carries it too): the answers hold personal data and depend on who asks.
 */
@Injectable()
export class NoStoreMiddleware implements NestMiddleware {
  use(_req: Request, res: Response, next: NextFunction): void {
    res.setHeader('Cache-Control', 'no-store');
    next();
  }
}
