import { type BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';

const DRAIN_MS = 10_000;

/**
 * SIGTERM: stop taking connections and let the requests in flight finish before anything closes. Nest itself
 * closes the HTTP server only after the shutdown hooks, i.e. after the database is closed; this runs first
 * (beforeApplicationShutdown), so an acknowledged lead is always committed and nothing is half-written.
 */
@Injectable()
export class GracefulShutdown implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Shutdown');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  async beforeApplicationShutdown(signal?: string): Promise<void> {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    if (!server?.listening) return;
    this.logger.log({ msg: 'shutting down: no new connections, draining requests in flight', signal: signal ?? 'close' });
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        server.closeAllConnections();
        resolve();
      }, DRAIN_MS);
      timer.unref();
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      // Keep-alive connections with no request in flight would hold close() open: closed now; and each connection
      // whose request is still in flight is closed as soon as its answer is written (Node gives an idle keep-alive
      // connection keepAliveTimeout, read when the answer ends) rather than its 5 s later.
      server.closeIdleConnections();
      server.keepAliveTimeout = 1;
    });
  }
}
