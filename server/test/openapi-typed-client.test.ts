/**
 * The OpenAPI document as a client's code generator reads it: `GET /openapi.json` of the real app turned into
 * TypeScript types by openapi-typescript, a small client written against those types typechecked by the TypeScript
 * compiler (a schema that says another type than the answers have fails the check), then that same client, with
 * openapi-fetch, run against the live server: it posts leads and pages through `GET /leads` with the cursor to its end.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { runInThisContext } from 'node:vm';
import ts from 'typescript';
import { SECRET_HEADER } from '@stickers/shared';
import { lead, sandboxSuite, SECRET } from './harness';

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
    // And what changed since before them: every lead once, by its change (all at one time), then by number.
    expect(await client.changedSince(server.url, SECRET, since)).toEqual([...posted].sort((a, b) => a - b).map((n) => [n, since]));

    // The same client, typechecked against the generated types; the check has teeth: reading lead_number as text fails.
    const wrong = CLIENT_SOURCE.replace('read.push(item.lead_number)', 'read.push(item.lead_number satisfies string as never)');
    const diagnostics = typecheck({ [TYPES]: await types, [CLIENT]: CLIENT_SOURCE, [WRONG_CLIENT]: wrong });
    expect(diagnostics[CLIENT]).toEqual([]);
    expect(diagnostics[WRONG_CLIENT].join('\n')).toMatch(/'number' does not satisfy the expected type 'string'/);
  });
});
