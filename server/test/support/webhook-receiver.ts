import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Received {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  /** What the receiver answered. */
  answered: number;
}

/** A webhook endpoint on a free port: records every request, answers as `answer` says for the n-th one (1-based). */
export class WebhookReceiver {
  readonly received: Received[] = [];
  answer: (n: number) => number = () => 200;
  url = '';
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const answered = this.answer(this.received.length + 1);
      this.received.push({ headers: req.headers, raw, body: JSON.parse(raw), answered });
      res.writeHead(answered).end();
    });
  });

  /** Listens; its URL has a path and a query holding a token, which no answer of the app may show. */
  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/hooks/leads?token=s3cr3t-path-token`;
  }

  get origin(): string {
    return new URL(this.url).origin;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
