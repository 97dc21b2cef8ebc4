/** Where the CLI reads and writes: the process's streams in production, a test's buffers in tests. */
export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
  /** Setup's answers (a terminal); absent or not a TTY: non-interactive. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Ctrl-C: setup stops waiting and hands polling back; absent: never. */
  signal?: AbortSignal;
}
