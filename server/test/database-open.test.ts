/**
 * Starting the server (the function main uses) on a database it cannot open: an unusable DATABASE_PATH or DATABASE_URL
 * is one config line naming the variable, where it points (never a password) and the reason.
 */
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { startFromEnv } from '../src/app';
import { ConfigError } from '../src/config/config';
import { CapturingLogger, SALT, SECRET, tempDir } from './harness';
import { itPostgresOnly, itSqliteOnly, postgresDatabaseFor } from './support/test-database';

let tmp: ReturnType<typeof tempDir>;
let started: INestApplication | undefined;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  await started?.close();
  started = undefined;
  tmp.remove();
});

const dbPath = () => join(tmp.dir, 'leads.sqlite');

describe('starting (the function main uses) on a database it cannot open', () => {
  const env = (extra: Record<string, string>) => ({ PORT: '0', LEADS_SECRET: SECRET, LEADS_IP_SALT: SALT, LOG_LEVEL: 'warn', ...extra });
  const logger = () => new CapturingLogger();

  async function startProblems(extra: Record<string, string>): Promise<string[]> {
    try {
      started = (await startFromEnv(env(extra), { logger })).app;
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
    return [];
  }

  itSqliteOnly(
    'an unusable DATABASE_PATH is one config line naming the variable, the path and the reason (SQLite only: the file)',
    async () => {
      const file = join(tmp.dir, 'plain-file');
      writeFileSync(file, 'not a directory');
      const under = join(file, 'leads.sqlite');
      expect(await startProblems({ DATABASE_PATH: under })).toEqual([`DATABASE_PATH=${under}: cannot open: ${file} is not a folder`]);
      const deeper = join(file, 'data', 'leads.sqlite');
      expect(await startProblems({ DATABASE_PATH: deeper })).toEqual([`DATABASE_PATH=${deeper}: cannot open: ${file} is not a folder`]);
      expect(await startProblems({ DATABASE_PATH: tmp.dir })).toEqual([
        `DATABASE_PATH=${tmp.dir}: cannot open: it is a folder: name the database file in it (e.g. ${join(tmp.dir, 'leads.sqlite')})`,
      ]);

      const notDb = join(tmp.dir, 'notes.txt');
      writeFileSync(notDb, 'this is not a database, just some text that is long enough to fill a header page. '.repeat(20));
      expect(await startProblems({ DATABASE_PATH: notDb })).toEqual([
        `DATABASE_PATH=${notDb}: cannot open: file is not a database (SQLITE_NOTADB)`,
      ]);
    },
  );

  itSqliteOnly(
    "the folder it creates for DATABASE_PATH is 0700: the leads are personal data, as the landing's spool (SQLite only)",
    async () => {
      const folder = join(tmp.dir, 'new-folder');
      expect(await startProblems({ DATABASE_PATH: join(folder, 'leads.sqlite') })).toEqual([]);
      expect(statSync(folder).mode & 0o777).toBe(0o700);
    },
  );

  itPostgresOnly(
    'an unusable DATABASE_URL is one config line naming the variable, the URL without its password and the reason (PostgreSQL only)',
    async () => {
      const url = new URL(await postgresDatabaseFor(dbPath()));
      url.password = 'secret-pw';
      url.pathname = '/no_such_database';
      const [problem, ...more] = await startProblems({ DATABASE_URL: url.toString() });
      expect(more).toEqual([]);
      url.password = '';
      expect(problem).toBe(`DATABASE_URL=${url.toString().replace(/:@/, '@')}: cannot connect: database "no_such_database" does not exist`);
      expect(problem).not.toContain('secret-pw');
    },
  );
});
