import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AbstractHttpAdapter, HttpAdapterHost } from '@nestjs/core';
import { LeadsController } from './leads.controller';

/**
 * Puts `POST /leads` ahead of Express (issue 15, docs/decisions.md "the hot route"): the HTTP server's request listener
 * becomes one that gives that route to LeadsController and every other request to Express (Nest's routes), as before.
 * Done at bootstrap by the module itself, so every app built from it has the route. An application
 * context without HTTP (the CLI) has nothing to mount.
 */
@Injectable()
export class LeadsRouteMount implements OnApplicationBootstrap {
  private readonly logger = new Logger('ExceptionsHandler');

  constructor(
    private readonly adapterHost: HttpAdapterHost<AbstractHttpAdapter<Server>>,
    private readonly leads: LeadsController,
  ) {}

  onApplicationBootstrap(): void {
    const adapter = this.adapterHost.httpAdapter;
    const server = adapter?.getHttpServer();
    if (!adapter || !server) return;
    const express = adapter.getInstance<RequestListener>();
    const listeners = server.listeners('request');
    if (listeners.length !== 1 || listeners[0] !== express)
      throw new Error('POST /leads: the HTTP server is not the one Nest built for Express');
    server.removeListener('request', express);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (!this.leads.handles(req)) return express(req, res);
      // serve() answers every error itself; this only keeps a failure of that answer from ending the process.
      this.leads.serve(req, res).catch((err: unknown) => {
        this.logger.error(err instanceof Error ? err.message : String(err));
        res.destroy();
      });
    });
  }
}
