/**
 * The OpenAPI document as a client's code generator reads it: `GET /openapi.json` of the real app turned into
 * TypeScript types by openapi-typescript, a small client written against those types typechecked by the TypeScript
 * compiler (a schema that says another type than the answers have fails the check), then that same client, with
 * openapi-fetch, run against the live server: it posts leads, pages through `GET /leads` with the cursor to its end and
 * by `updated_since`, writes a status back, lists the webhook events and has one delivered again — a CRM's whole loop.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';
import ts from 'typescript';
import { SECRET_HEADER } from '@stickers/shared';
import { lead, sandboxSuite, SECRET, waitFor } from './harness';
import { WebhookReceiver } from './support/webhook-receiver';

const { boot } = sandboxSuite();

/** Where the generated types and the client are said to be: beside this file, so packages resolve as here (never written). */
const DIR = join(__dirname, 'typed-client');
const TYPES = join(DIR, 'api.ts');
const CLIENT = join(DIR, 'client.ts');
const WRONG_CLIENT = join(DIR, 'wrong-client.ts');

/** The integrator's sync loop, typed by the generated `paths`: every lead posted, then every page read. */
const CLIENT_SOURCE = `
import createClient from 'openapi-fetch';
import type { components, paths } from './api';

type LeadRequest = components['schemas']['LeadRequest'];

export async function postThenSync(baseUrl: string, secret: string, leads: LeadRequest[]): Promise<{ posted: number[]; read: number[] }> {
  const client = createClient<paths>({ baseUrl, headers: { '${SECRET_HEADER}': secret } });
  const posted: number[] = [];
  for (const body of leads) {
    const { data, error, response } = await client.POST('/leads', { body });
    if (!data) throw new Error(\`POST /leads: \${response.status} \${JSON.stringify(error)}\`);
    const accepted: { lead_number: number; duplicate: boolean; repeat: boolean } = data;
    posted.push(accepted.lead_number);
  }
  const read: number[] = [];
  let cursor: string | undefined;
  for (;;) {
    const { data, error, response } = await client.GET('/leads', { params: { query: { limit: 2, cursor } } });
    if (!data) throw new Error(\`GET /leads: \${response.status} \${JSON.stringify(error)}\`);
    for (const item of data.leads) {
      // What an integrator stores, each with the type it is stored as.
      const row: { status: 'new' | 'in_progress' | 'won' | 'lost' | 'spam'; name: string | null; created_at: string } = item;
      if (row.created_at) read.push(item.lead_number);
    }
    const next: string | null = data.next_cursor;
    if (next === null) return { posted, read };
    cursor = next;
  }
}

/** The loop of "what changed since": each lead changed at or after \`since\`, oldest change first, with its updated_at. */
export async function changedSince(baseUrl: string, secret: string, since: string): Promise<[number, string][]> {
  const client = createClient<paths>({ baseUrl, headers: { '${SECRET_HEADER}': secret } });
  const read: [number, string][] = [];
  let cursor: string | undefined;
  for (;;) {
    const { data, error, response } = await client.GET('/leads', { params: { query: { updated_since: since, limit: 2, cursor } } });
    if (!data) throw new Error(\`GET /leads: \${response.status} \${JSON.stringify(error)}\`);
    for (const item of data.leads) {
      const updatedAt: string = item.updated_at;
      read.push([item.lead_number, updatedAt]);
    }
    const next: string | null = data.next_cursor;
    if (next === null) return read;
    cursor = next;
  }
}

/** The CRM writes back: a lead moved to «in progress», and the same move again from a stale \`from\` (409). */
export async function writeBack(baseUrl: string, secret: string, leadNumber: number) {
  const client = createClient<paths>({ baseUrl, headers: { '${SECRET_HEADER}': secret } });
  const path = { lead_number: leadNumber };
  const moved = await client.POST('/leads/{lead_number}/status', { params: { path }, body: { from: 'new', to: 'in_progress', by: 'CRM: Мария' } });
  if (!moved.data) throw new Error(\`POST status: \${moved.response.status} \${JSON.stringify(moved.error)}\`);
  const status: 'new' | 'in_progress' | 'won' | 'lost' | 'spam' = moved.data.lead.status;
  const stale = await client.POST('/leads/{lead_number}/status', { params: { path }, body: { from: 'new', to: 'spam', by: 'CRM' } });
  return { status, stale: stale.response.status };
}

/** After an outage of its receiver: the events since then listed, and one of the given type delivered again. */
export async function redeliver(baseUrl: string, secret: string, since: string, type: string) {
  const client = createClient<paths>({ baseUrl, headers: { '${SECRET_HEADER}': secret } });
  const { data: listed } = await client.GET('/webhooks/events', { params: { query: { since } } });
  if (!listed) throw new Error('GET /webhooks/events failed');
  const events: { id: string; type: string; lead_number: number }[] = listed.events;
  const event = events.find((e) => e.type === type);
  if (!event) throw new Error(\`no \${type} event\`);
  const again = await client.POST('/webhooks/events/{id}/redeliver', { params: { path: { id: event.id } } });
  if (!again.data) throw new Error(\`redeliver: \${again.response.status}\`);
  const queued: number = again.data.queued;
  return { types: events.map((e) => e.type), id: event.id, queued };
}
`;

/** openapi-typescript's types of the document (openapiTS, astToString), made by Node: support/openapi-types.mjs. */
function generateTypes(documentText: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [join(__dirname, 'support', 'openapi-types.mjs')],
      { maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => (err ? reject(new Error(`openapi-types.mjs failed: ${stderr || err.message}`)) : resolve(stdout)),
    );
    child.stdin!.end(documentText);
  });
}

/** Each file's diagnostics: the generated types and the clients, compiled strictly with the packages of this repo. */
function typecheck(files: Record<string, string>): Record<string, string[]> {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: [],
    skipLibCheck: true,
  };
  const disk = ts.createCompilerHost(options);
  const host: ts.CompilerHost = {
    ...disk,
    directoryExists: (dir) => dir === DIR || ts.sys.directoryExists(dir),
    fileExists: (file) => file in files || disk.fileExists(file),
    readFile: (file) => files[file] ?? disk.readFile(file),
    getSourceFile: (file, language, onError) =>
      file in files ? ts.createSourceFile(file, files[file], language) : disk.getSourceFile(file, language, onError),
  };
  const program = ts.createProgram({ rootNames: Object.keys(files), options, host });
  const text = (d: ts.Diagnostic) => ts.flattenDiagnosticMessageText(d.messageText, '\n');
  const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()].map(text);
  return Object.fromEntries(
    Object.keys(files).map((file) => {
      const source = program.getSourceFile(file)!;
      return [
        file,
        [...global, ...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) =>
          typeof d === 'string' ? d : text(d),
        ),
      ];
    }),
  );
}

/** The client as JavaScript (CommonJS), its imports resolved from here. */
function load(source: string): {
  postThenSync: (baseUrl: string, secret: string, leads: unknown[]) => Promise<{ posted: number[]; read: number[] }>;
  changedSince: (baseUrl: string, secret: string, since: string) => Promise<[number, string][]>;
  writeBack: (baseUrl: string, secret: string, leadNumber: number) => Promise<{ status: string; stale: number }>;
  redeliver: (baseUrl: string, secret: string, since: string, type: string) => Promise<{ types: string[]; id: string; queued: number }>;
} {
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  const module = { exports: {} as Record<string, unknown> };
  const run = runInThisContext(`(function (module, exports, require) {${js.outputText}\n})`, { filename: CLIENT }) as (
    module: unknown,
    exports: unknown,
    require: NodeJS.Require,
  ) => void;
  run(module, module.exports, createRequire(CLIENT));
  return module.exports as never;
}

describe('a client generated from GET /openapi.json', () => {
  it('typechecks against the generated types, and syncs every posted lead once through the cursor', async () => {
    const server = await boot();
    const types = generateTypes(await (await fetch(`${server.url}/openapi.json`)).text());

    // The client, run: five leads posted, then read back two a page until next_cursor is null.
    const leads = Array.from({ length: 5 }, () => lead());
    const since = new Date(server.clock.now()).toISOString();
    const client = load(CLIENT_SOURCE);
    const { posted, read } = await client.postThenSync(server.url, SECRET, leads);
    await server.outbox.whenIdle();
    expect(posted).toHaveLength(5);
    expect(read).toEqual([...posted].sort((a, b) => b - a));
    // And what changed since before them: every lead once, by its change (all at one time: stored, then its card published
    // at the same instant of this standing clock, a millisecond on), then by number.
    const published = new Date(server.clock.now() + 1).toISOString();
    expect(await client.changedSince(server.url, SECRET, since)).toEqual([...posted].sort((a, b) => a - b).map((n) => [n, published]));

    // The same client, typechecked against the generated types; the check has teeth: reading lead_number as text fails.
    const wrong = CLIENT_SOURCE.replace('read.push(item.lead_number)', 'read.push(item.lead_number satisfies string as never)');
    const diagnostics = typecheck({ [TYPES]: await types, [CLIENT]: CLIENT_SOURCE, [WRONG_CLIENT]: wrong });
    expect(diagnostics[CLIENT]).toEqual([]);
    expect(diagnostics[WRONG_CLIENT].join('\n')).toMatch(/'number' does not satisfy the expected type 'string'/);
  });

  it('writes back as a CRM does: a status moved (409 on a stale from), the events listed, one redelivered to the receiver', async () => {
    const receiver = new WebhookReceiver();
    await receiver.start();
    try {
      const server = await boot({ env: { LEADS_WEBHOOK_URL: receiver.url, LEADS_WEBHOOK_SECRET: 'whsec_test_0123456789abcdef' } });
      const since = new Date(server.clock.now()).toISOString();
      const client = load(CLIENT_SOURCE);
      const { posted } = await client.postThenSync(server.url, SECRET, [lead()]);
      expect(await client.writeBack(server.url, SECRET, posted[0])).toEqual({ status: 'in_progress', stale: 409 });
      const changed = () => receiver.received.filter((r) => r.body.type === 'lead.status_changed');
      await waitFor(() => changed().length === 1, 5000, 'the status change delivered');

      const again = await client.redeliver(server.url, SECRET, since, 'lead.status_changed');
      expect(again.types.sort()).toEqual(['lead.created', 'lead.status_changed']);
      expect(again.queued).toBe(1);
      await server.outbox.whenIdle();
      await server.outbox.tick();
      await waitFor(() => changed().length === 2, 5000, 'the status change delivered again');
      expect(changed().map((r) => [r.body.id, r.body.data.lead.lead_number, r.body.data.to])).toEqual([
        [again.id, posted[0], 'in_progress'],
        [again.id, posted[0], 'in_progress'],
      ]);
    } finally {
      await receiver.stop();
    }
  });
});
