/** The process's streams in production, a test's buffers in tests; `stdin` (a TTY) answers setup, `signal` is Ctrl-C. */
export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  signal?: AbortSignal;
}
