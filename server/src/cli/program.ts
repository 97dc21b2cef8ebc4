import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { errorText } from '@stickers/shared';
import { isStorageError } from '../database/write-health';
import { readDatabaseVariables } from '../config/config';
import { readWebhooks } from '../config/webhook-endpoints';
import { EnvReader } from '../config/env-reader';
import { runDoctor } from '../doctor/doctor';
import type { SetupFlags } from '../setup/setup-session';
import { runSetup } from './setup.command';
import type { CliIo } from './cli-io';
import type * as ops from './ops';
import { terminalSafe } from './terminal-text';

/** Passed in: a test records what each is given. */
export type OpsCommands = typeof ops;

/** A usage error's exit code (a wrong word, a missing argument); a command's own failure is 1. */
const USAGE_EXIT = 2;

/** An option's parser: `raw` when it matches `re`, else commander's usage error saying what the option takes. */
const matching = (re: RegExp, what: string) => (raw: string) => {
  if (!re.test(raw)) throw new InvalidArgumentError(`It must be ${what}.`);
  return raw;
};
const seconds = (raw: string) => Number(matching(/^(?!0+$)\d{1,5}$/, 'whole seconds from 1')(raw));
const chatId = matching(/^-?\d{1,20}$/, 'a chat id like -1001234567890');
const userId = (raw: string) => Number(matching(/^(?!0+$)\d{1,15}$/, 'a Telegram user id like 123456789')(raw));

/** A usage error of any command ends with where its own help is: `see: npm run leads -- webhooks replay --help`. */
function pointToHelp(command: Command, words: string[] = []): void {
  command.showHelpAfterError(['see: npm run leads --', ...words, '--help'].join(' '));
  for (const sub of command.commands) pointToHelp(sub, [...words, sub.name()]);
}

/** `npm run leads -- <command>` on commander. The exit code: 0 done, 1 a problem (said), 2 a usage error, 130 Ctrl-C. */
export async function runCli(argv: string[], given: CliIo, ops: OpsCommands): Promise<number> {
  // Every line goes through terminalSafe: a chat title or a user name from Telegram, an error quoting a URL.
  const io: CliIo = { ...given, out: (line) => given.out(terminalSafe(line)), err: (line) => given.err(terminalSafe(line)) };
  const lines = (write: (line: string) => void) => (text: string) => text.replace(/\n+$/, '').split('\n').forEach(write);
  // The database as the server reads it: a DATABASE_URL it refuses is refused here too, never taken for a file's path.
  const variables = new EnvReader(io.env);
  const { databasePath: path, databaseUrl } = readDatabaseVariables(variables);
  const url = databaseUrl ?? undefined;
  const location = url ?? path;
  /** A command on the database, once its variables are right (else a line each, exit 2). */
  const onDatabase = (work: () => Promise<number>): Promise<number> => {
    for (const problem of variables.problems) io.err(problem);
    return variables.problems.length > 0 ? Promise.resolve(USAGE_EXIT) : work();
  };
  let exitCode = USAGE_EXIT;
  const program = new Command('npm run leads --')
    .usage('<command> [options]')
    .description(
      'Stickers Leads ops commands. The database: DATABASE_URL (PostgreSQL) when set, else DATABASE_PATH (SQLite, default ./data/leads.sqlite).',
    )
    .configureOutput({ writeOut: lines(io.out), writeErr: lines(io.err) })
    .exitOverride();
  const command = <A extends unknown[]>(
    spec: string,
    description: string,
    options: [string, string, ((raw: string) => unknown)?, unknown?][],
    work: (...args: A) => Promise<number>,
    parent = program,
  ) => {
    const sub = parent.command(spec).description(description);
    for (const [flags, text, parse, fallback] of options)
      if (parse) sub.option(flags, text, parse, fallback);
      else sub.option(flags, text);
    return sub.action(async (...args: A) => {
      exitCode = await work(...args);
    });
  };

  command(
    'setup',
    'from TELEGRAM_BOT_TOKEN alone to the chat lines of .env: finds the group and topic, checks the rights, sends a test card',
    [
      ['--timeout <seconds>', 'the longest each wait lasts (the bot added, a message, the press)', seconds, 300],
      ['--no-admin', 'skip the admin chat step'],
      ['--delete-webhook', 'delete a webhook that is set without asking (the server sets it again at its start)'],
      ['--drop-pending', 'go on even when button presses or commands wait for the server (they are dropped)'],
      ['--chat <chat id>', 'take only this group as the leads group (/stickers_chatid in it tells its id)', chatId],
      ['--from <user id>', 'take only a group that this Telegram user (you) adds the bot to, or writes /stickers_chatid in', userId],
    ],
    (options: SetupFlags) => runSetup(io, options),
  );
  command(
    'doctor',
    "checks a configured deployment: the server's configuration, the token, every chat and topic, the webhook, the database, LEADS_ENDPOINT",
    [],
    () => runDoctor(io.env, io.out),
  );
  command(
    'trace <key>',
    'the whole story of a request or a lead (<key>: its request_id or its number)',
    [['--json', 'as JSON']],
    (key: string, options: { json?: boolean }) => onDatabase(() => ops.trace(location, key, options.json === true)),
  );
  command('backup <file>', 'a consistent, checked copy of the live SQLite database (on PostgreSQL use pg_dump)', [], (file: string) =>
    onDatabase(() => {
      if (!url) return ops.backup(path, file);
      io.err('backup copies the SQLite file; on PostgreSQL use pg_dump (docs/deployment.md)');
      return Promise.resolve(USAGE_EXIT);
    }),
  );
  command(
    'forget',
    "erase every lead and repeat of a person (needs the server's LEADS_IP_SALT)",
    [
      ['--phone <phone>', 'the phone as the form takes it: +7 916 555-12-34, 8 916 555-12-34 (LEADS_PHONE_REGION, RU)'],
      ['--telegram <name>', 'the Telegram username: @name'],
    ],
    (options: { phone?: string; telegram?: string }, sub: Command) => {
      if ((options.phone === undefined) === (options.telegram === undefined))
        sub.error(`forget ${options.phone === undefined ? 'needs' : 'takes only'} one of --phone <+7…> or --telegram <@name>`, {
          exitCode: USAGE_EXIT,
        });
      const [option, value] = options.phone !== undefined ? ['--phone', options.phone] : ['--telegram', options.telegram!];
      // The salt as the server reads it (trimmed): a secret file's trailing newline would key the erasure's hashes apart.
      const salt = variables.string('LEADS_IP_SALT') || undefined;
      return onDatabase(() => ops.forget(location, option, value, Date.now(), salt, io.env.LEADS_PHONE_REGION));
    },
  );
  command(
    'retry',
    'send now what waits for its next try after a failure (cards, pings, answers, webhook deliveries): after fixing its cause',
    [],
    () => onDatabase(() => ops.retry(location)),
  );
  command(
    'migrate-to-postgres [url]',
    'copy the SQLite file (DATABASE_PATH) into an empty PostgreSQL database (default: DATABASE_URL)',
    [],
    (target: string | undefined) => onDatabase(() => ops.migrateToPostgres(path, target ?? url)),
  );
  const webhooks = program.command('webhooks').description('the signed webhooks the server sends');
  command(
    'replay <key>',
    'send webhook events again: an event by its id (evt_…), or every event of a lead (its number)',
    [],
    (key: string) => {
      // The URLs a delivery may go to: the server's, read as it reads them (a bad entry is a line, exit 2).
      const endpoints = readWebhooks(variables);
      return onDatabase(() => ops.webhooksReplay(location, key, endpoints));
    },
    webhooks,
  );

  pointToHelp(program);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : USAGE_EXIT;
    // A command's failure (no database server, a file that is no database): one line, never a stack trace, and what
    // to do about the two an operator meets: another database than the server's, and a lock held past the wait.
    const text = errorText(err);
    const unreachable = (err as { code?: unknown }).code === 'DATABASE_UNREACHABLE';
    const hint = /no such table|relation "\w+" does not exist/.test(text)
      ? ": is DATABASE_PATH or DATABASE_URL the server's database? (npm run leads -- doctor checks it)"
      : !isStorageError(err)
        ? ''
        : url === undefined
          ? ': the database is busy or away; run it again once it is free (fuser "$DATABASE_PATH" names a lock\'s holder)'
          : unreachable
            ? ": is PostgreSQL up, and are DATABASE_URL's host, user, password and database right? (npm run leads -- doctor checks it)"
            : ': the database is busy or away; run it again once it is free';
    io.err(`${text}${hint}`);
    return 1;
  }
  return exitCode;
}
