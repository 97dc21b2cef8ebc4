// The house (docs/architecture.md, "Server layers") is dependency-cruiser's rules in .dependency-cruiser.cjs, run by
// `npm run lint` through scripts/depcruise.mjs. This test runs the same script: on a copy of the sources with one
// planted breach per rule (each must be reported by its rule, and nothing else), and on the real tree (no violation).
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'depcruise.mjs');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

interface Violation {
  rule: { name: string; severity: string };
  from: string;
  to: string;
}

interface Summary {
  violations: Violation[];
  error: number;
  totalCruised: number;
}

/** dependency-cruiser's summary of server/src and shared/src, as seen from `cwd`. */
function cruise(cwd: string): Summary {
  const run = spawnSync(process.execPath, [SCRIPT, '--config', CONFIG, '--output-type', 'json', 'server/src', 'shared/src'], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(run.stderr).toBe('');
  return (JSON.parse(run.stdout) as { summary: Summary }).summary;
}

/** One breach per rule: file → its code, under server/src of the copy. */
const PLANTED: Record<string, string> = {
  // A circle of type-only imports still counts.
  'cards/planted-a.ts': "import type { B } from './planted-b';\nexport interface A { b?: B }\n",
  'cards/planted-b.ts': "import type { A } from './planted-a';\nexport interface B { a?: A }\n",
  'domain/planted.ts': "import type { LeadsService } from '../leads/leads.service';\nexport type Planted = LeadsService;\n",
  'i18n/planted.ts': "export { refusalText } from '../bot/bot-commands.service';\n",
  'http/planted.ts': "import type { LeadsService } from '../leads/leads.service';\nexport type Planted = LeadsService;\n",
  'access/planted.ts': "import type { InboxService } from '../inbox/inbox.service';\nexport type Planted = InboxService;\n",
  'health/planted-outbox.ts': "import type { OutboxService } from '../outbox/outbox.service';\nexport type Planted = OutboxService;\n",
  'observability/planted-inbox.ts': "import { ApiLeadNumber } from '../inbox/inbox.dto';\nexport const planted = ApiLeadNumber;\n",
  'housekeeping/planted-inbox.ts': "import type { InboxService } from '../inbox/inbox.service';\nexport type Planted = InboxService;\n",
  'observability/planted-outbox.ts':
    "import type { OutboxService } from '../outbox/outbox.service';\nexport type Planted = OutboxService;\n",
  'repositories/planted.repository.ts':
    "import { ExportService } from '../export/export.service';\nexport const planted = ExportService;\n",
  'trace/planted.controller.ts': "import { InjectDb } from '../database/database.module';\nexport const planted = InjectDb;\n",
  'bot/planted.update.ts':
    "import type { LeadsRepository } from '../repositories/leads.repository';\nexport type Planted = LeadsRepository;\n",
  'leads/planted.service.ts': "import { sql } from 'kysely';\nexport const planted = sql;\n",
  // Types of the database are fine in a service: not a breach.
  'leads/planted-types.service.ts':
    "import type { Kysely } from 'kysely';\nimport type { Db } from '../database/database';\nexport type Planted = [Kysely<Db>];\n",
  'alerts/planted-telegraf.ts': "import { Telegraf } from 'telegraf';\nexport const planted = Telegraf;\n",
  'outbox/planted-bot.ts': "import { InjectBot } from 'nestjs-telegraf';\nexport const planted = InjectBot;\n",
  // Hoisted into node_modules by another package, named by no package.json of ours.
  'cards/planted-undeclared.ts': "import ms from 'ms';\nexport const planted = ms;\n",
  'cards/planted-unresolvable.ts': "import { planted } from './no-such-file';\nexport { planted };\n",
  'cards/planted-dev.ts': "import { Test } from '@nestjs/testing';\nexport const planted = Test;\n",
  // A devDependency as types only is fine: not a breach.
  'cards/planted-dev-types.ts': "import type { TestingModule } from '@nestjs/testing';\nexport type Planted = TestingModule;\n",
};
/** The copy's server entry point imports every planted file, so that each breaks only its own rule; but this one. */
const UNREACHABLE = { 'cards/planted-dead.ts': 'export const planted = 1;\n' };

describe('the house (dependency-cruiser)', () => {
  let copy: string;
  let planted: Summary;

  beforeAll(() => {
    mkdirSync(join(ROOT, '.cache'), { recursive: true });
    // Inside the repository, so that packages resolve from its node_modules as they do for the real tree.
    copy = mkdtempSync(join(ROOT, '.cache', 'architecture-'));
    for (const path of [
      'package.json',
      'tsconfig.json',
      'server/package.json',
      'server/tsconfig.json',
      'server/src',
      'shared/package.json',
      'shared/src',
    ]) {
      cpSync(join(ROOT, path), join(copy, path), { recursive: true });
    }
    for (const [file, code] of Object.entries({ ...PLANTED, ...UNREACHABLE })) {
      const path = join(copy, 'server', 'src', file);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, code);
    }
    const imports = Object.keys(PLANTED).map((file) => `import './${file.replace(/\.ts$/, '')}';\n`);
    appendFileSync(join(copy, 'server', 'src', 'main.ts'), imports.join(''));
    writeFileSync(join(copy, 'shared', 'src', 'planted-dead.ts'), 'export const planted = 1;\n');
    planted = cruise(copy);
  });

  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  const reported = () =>
    planted.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to.replace(/^.*node_modules\/([^/]+)\/.*$/, '$1')}`).sort();

  it('reports a circle of imports, type-only ones included', () => {
    expect(reported().filter((v) => v.startsWith('no-circular:'))).toEqual([
      'no-circular: server/src/cards/planted-a.ts → server/src/cards/planted-b.ts',
    ]);
  });

  it('reports the bottom (domain, config, clock, i18n) importing anything above it', () => {
    expect(reported()).toEqual(
      expect.arrayContaining([
        'bottom-imports-nothing-above: server/src/domain/planted.ts → server/src/leads/leads.service.ts',
        'bottom-imports-nothing-above: server/src/i18n/planted.ts → server/src/bot/bot-commands.service.ts',
      ]),
    );
  });

  it('reports http/ importing the folder of a door', () => {
    expect(reported()).toContain('http-imports-no-doors: server/src/http/planted.ts → server/src/leads/leads.service.ts');
  });

  it('reports access/ importing the folder of a door', () => {
    expect(reported()).toContain('access-imports-no-doors: server/src/access/planted.ts → server/src/inbox/inbox.service.ts');
  });

  it('reports observability/, health/ or housekeeping/ importing the inbox or the outbox', () => {
    expect(reported()).toEqual(
      expect.arrayContaining([
        'observability-health-and-housekeeping-import-no-features: server/src/health/planted-outbox.ts → server/src/outbox/outbox.service.ts',
        'observability-health-and-housekeeping-import-no-features: server/src/observability/planted-inbox.ts → server/src/inbox/inbox.dto.ts',
        'observability-health-and-housekeeping-import-no-features: server/src/housekeeping/planted-inbox.ts → server/src/inbox/inbox.service.ts',
        'observability-health-and-housekeeping-import-no-features: server/src/observability/planted-outbox.ts → server/src/outbox/outbox.service.ts',
      ]),
    );
  });

  it('reports a repository importing a service', () => {
    expect(reported()).toContain(
      'repositories-import-no-services: server/src/repositories/planted.repository.ts → server/src/export/export.service.ts',
    );
  });

  it('reports a controller or a bot handler importing the database or a repository', () => {
    expect(reported()).toEqual(
      expect.arrayContaining([
        'controllers-call-services-only: server/src/trace/planted.controller.ts → server/src/database/database.module.ts',
        'controllers-call-services-only: server/src/bot/planted.update.ts → server/src/repositories/leads.repository.ts',
      ]),
    );
  });

  it('reports a service importing kysely for more than its types', () => {
    expect(reported().filter((v) => v.startsWith('services-reach-the-database-through-repositories:'))).toEqual([
      'services-reach-the-database-through-repositories: server/src/leads/planted.service.ts → kysely',
    ]);
  });

  it('reports telegraf outside telegram/ and nestjs-telegraf outside bot/ and telegram/', () => {
    expect(reported()).toEqual(
      expect.arrayContaining([
        'only-telegram-imports-telegraf: server/src/alerts/planted-telegraf.ts → telegraf',
        'nestjs-telegraf-in-bot-and-telegram-only: server/src/outbox/planted-bot.ts → nestjs-telegraf',
      ]),
    );
  });

  it('reports a package no package.json names, an import that resolves to nothing, and a devDependency at run time', () => {
    expect(reported()).toEqual(
      expect.arrayContaining([
        'no-undeclared-packages: server/src/cards/planted-undeclared.ts → ms',
        'no-unresolvable-imports: server/src/cards/planted-unresolvable.ts → ./no-such-file',
        'no-dev-dependencies-at-run-time: server/src/cards/planted-dev.ts → @nestjs',
      ]),
    );
  });

  it("reports a file no entry point reaches, in the server and in shared's package", () => {
    expect(reported().filter((v) => v.startsWith('no-unreachable-'))).toEqual([
      'no-unreachable-files: server/src/cards/planted-dead.ts → server/src/cards/planted-dead.ts',
      'no-unreachable-shared-files: shared/src/planted-dead.ts → shared/src/planted-dead.ts',
    ]);
  });

  it('reports the planted breaches and nothing else', () => {
    expect(planted.violations.every((v) => v.from.includes('/planted'))).toBe(true);
    expect(planted.error).toBe(20);
  });

  it('finds no violation in the real tree', () => {
    const real = cruise(ROOT);
    expect(real.violations).toEqual([]);
    expect(real.totalCruised).toBeGreaterThan(200);
  });
});
