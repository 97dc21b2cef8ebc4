import type { LoggerService } from '@nestjs/common';
import { errorText } from '@stickers/shared';

const ORDER = ['debug', 'info', 'warn', 'error'] as const;
export type JsonLevel = (typeof ORDER)[number];

/** Nest's own start-up lines (about forty) are debug: a start says what it is in one line of its own (main.ts). */
const NEST_STARTUP_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

/** One JSON object per line: `time`, `level`, `context`, `msg`, and the fields the caller gave (`lead_number`…); no personal data. */
export class JsonLogger implements LoggerService {
  constructor(
    private readonly level: JsonLevel = 'info',
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  ) {}

  private emit(level: JsonLevel, message: unknown, optional: unknown[]): void {
    if (ORDER.indexOf(level) < ORDER.indexOf(this.level)) return;
    const rest = [...optional];
    const context = typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const fields =
      message !== null && typeof message === 'object' && !(message instanceof Error)
        ? (message as Record<string, unknown>)
        : { msg: errorText(message) };
    const stack = rest.find((r) => typeof r === 'string' && r.includes('\n    at '));
    this.write(
      JSON.stringify({ time: new Date().toISOString(), level, ...(context ? { context } : {}), ...fields, ...(stack ? { stack } : {}) }),
    );
  }

  log(message: unknown, ...optional: unknown[]) {
    const context = optional[optional.length - 1];
    this.emit(typeof context === 'string' && NEST_STARTUP_CONTEXTS.has(context) ? 'debug' : 'info', message, optional);
  }

  /** Nest's own line when listening fails is debug: main.ts says it as one `config error:` line naming PORT or HOST. */
  error = (message: unknown, ...optional: unknown[]) =>
    this.emit(optional.at(-1) === 'NestApplication' && String(message).startsWith('Error: listen ') ? 'debug' : 'error', message, optional);
  warn = (message: unknown, ...optional: unknown[]) => this.emit('warn', message, optional);
  debug = (message: unknown, ...optional: unknown[]) => this.emit('debug', message, optional);
  verbose = (message: unknown, ...optional: unknown[]) => this.emit('debug', message, optional);
  fatal = (message: unknown, ...optional: unknown[]) => this.emit('error', message, optional);
}
