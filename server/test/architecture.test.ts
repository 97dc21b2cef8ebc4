// The house, checked on every run (docs/architecture.md, "Layers"): controllers and bot handlers call services only;
// services reach the database through repositories; only server/src/telegram/ talks to telegraf. The same rules are
// lint errors (eslint.config.mjs); this test also proves the checker itself catches each kind of breach.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = resolve(__dirname, '..', 'src');

interface Import {
  from: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Every `import … from '…'` and `export … from '…'` of a file, with whether it brings types only. */
export function importsOf(code: string): Import[] {
  const found: Import[] = [];
  const statement = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"]([^'"]+)['"]/g;
  for (const m of code.matchAll(statement)) {
    const clause = m[3];
    const names = /^\{([^}]*)\}$/
      .exec(clause.trim())?.[1]
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean);
    const allTypes = names !== undefined && names.length > 0 && names.every((n) => /^type\s/.test(n));
    found.push({ from: m[4], typeOnly: m[2] !== undefined || allTypes });
  }
  return found;
}

/** Where a relative import lands inside server/src, as a path like `repositories/leads.repository`. */
function target(file: string, from: string): string {
  return from.startsWith('.') ? relative(SRC, resolve(dirname(file), from)) : from;
}

type Rule = (file: string, imp: Import) => string | null;

const isController = (file: string) => /\.controller\.ts$/.test(file) || /^bot\/.*\.update\.ts$/.test(file);
const isService = (file: string) => /\.service\.ts$/.test(file);
const inTelegram = (file: string) => file.startsWith('telegram/');

export const RULES: Record<string, Rule> = {
  'controllers and bot handlers call services only': (file, imp) => {
    if (!isController(file)) return null;
    const to = target(join(SRC, file), imp.from);
    return /^(database|repositories)\//.test(to) || ['better-sqlite3', 'kysely'].includes(to) ? to : null;
  },
  'services reach the database through repositories (types are fine)': (file, imp) => {
    if (!isService(file) || imp.typeOnly) return null;
    const to = target(join(SRC, file), imp.from);
    return ['better-sqlite3', 'kysely', 'database/database', 'database/database.module'].includes(to) ? to : null;
  },
  'only server/src/telegram/ imports telegraf (bot/ may use nestjs-telegraf decorators)': (file, imp) => {
    if (inTelegram(file)) return null;
    if (/^telegraf(\/|$)/.test(imp.from)) return imp.from;
    if (imp.from === 'nestjs-telegraf' && !file.startsWith('bot/')) return imp.from;
    return null;
  },
};

function breaches(rule: Rule, files: { file: string; code: string }[]): string[] {
  return files.flatMap(({ file, code }) =>
    importsOf(code)
      .map((imp) => rule(file, imp))
      .filter((hit): hit is string => hit !== null)
      .map((hit) => `${file} imports ${hit}`),
  );
}

const tree = sourceFiles(SRC).map((path) => ({ file: relative(SRC, path), code: readFileSync(path, 'utf8') }));

describe('the house', () => {
  it('finds the controllers, bot handlers and services it checks', () => {
    expect(tree.filter((f) => isController(f.file)).length).toBeGreaterThanOrEqual(3);
    expect(tree.filter((f) => isService(f.file)).length).toBeGreaterThanOrEqual(8);
  });

  for (const [name, rule] of Object.entries(RULES)) {
    it(name, () => {
      expect(breaches(rule, tree)).toEqual([]);
    });
  }

  it('the checker catches each kind of breach', () => {
    const bad = [
      { file: 'trace/trace.controller.ts', code: "import { InjectDb } from '../database/database.module';" },
      { file: 'bot/leads-bot.update.ts', code: "import type { LeadsRepository } from '../repositories/leads.repository';" },
      {
        file: 'leads/leads.service.ts',
        code: "import { DatabaseHandle } from '../database/database.module';\nimport { sql } from 'kysely';",
      },
      { file: 'alerts/alerts.service.ts', code: "import { Telegram } from 'telegraf';" },
      { file: 'outbox/outbox.service.ts', code: "import { InjectBot } from 'nestjs-telegraf';" },
    ];
    const [controllers, services, telegraf] = Object.values(RULES).map((rule) => breaches(rule, bad));
    expect(controllers).toEqual([
      'trace/trace.controller.ts imports database/database.module',
      'bot/leads-bot.update.ts imports repositories/leads.repository',
    ]);
    expect(services).toEqual(['leads/leads.service.ts imports database/database.module', 'leads/leads.service.ts imports kysely']);
    expect(telegraf).toEqual(['alerts/alerts.service.ts imports telegraf', 'outbox/outbox.service.ts imports nestjs-telegraf']);
    // Types are fine in a service.
    expect(
      breaches(RULES['services reach the database through repositories (types are fine)'], [
        {
          file: 'leads/leads.service.ts',
          code: "import type { LeadsDb } from '../database/database';\nimport { type Lead } from 'kysely';",
        },
      ]),
    ).toEqual([]);
  });
});
