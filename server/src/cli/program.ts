import { Command, CommanderError } from 'commander';
import { runDoctor } from '../doctor/doctor';
import { runSetup } from './setup.command';
import type { CliIo } from './cli-io';
import type * as ops from './ops';
import { terminalSafe } from './terminal-text';

/** Passed in: a test records what each is given. */
export type OpsCommands = typeof ops;

/** A usage error's exit code (a wrong word, a missing argument); a command's own failure is 1. */
const USAGE_EXIT = 2;

/** commander 4's own parts that print (replaced by routeOutput). */
interface CommanderInternals {
  missingArgument(name: string): void;
  optionMissingArgument(option: { flags: string }, flag?: string): void;
  unknownOption(flag: string): void;
  outputHelp(): void;
  helpInformation(): string;
  _exit(exitCode: number, code: string, message: string): void;
  _helpLongFlag: string;
  commands: Command[];
  emit(event: string): boolean;
}

/** commander 4.1 prints with console.error and process.stdout.write, with no hook: its printing methods are replaced. */
function routeOutput(command: Command, io: CliIo): void {
  const c = command as unknown as CommanderInternals;
  const usageError = (code: string, message: string) => {
    io.err(message);
    io.err(`see: npm run leads -- ${command.name() === ROOT_NAME ? '' : `${command.name()} `}--help`);
    c._exit(USAGE_EXIT, code, message);
  };
  c.missingArgument = (name) => usageError('commander.missingArgument', `missing argument: <${name}>`);
  c.optionMissingArgument = (option) => usageError('commander.optionMissingArgument', `option ${option.flags} needs a value`);
  c.unknownOption = (flag) => usageError('commander.unknownOption', `unknown option: ${flag}`);
  c.outputHelp = () => {
    for (const line of c.helpInformation().replace(/\n+$/, '').split('\n')) io.out(line);
    c.emit(c._helpLongFlag);
  };
  for (const sub of c.commands) routeOutput(sub, io);
}

const ROOT_NAME = 'npm run leads --';

/** `raw` when it matches `re`; else a usage error saying what `option` takes. */
function matching(raw: string, re: RegExp, option: string, what: string): string {
  if (!re.test(raw)) throw new CommanderError(USAGE_EXIT, 'leads.badOption', `${option} must be ${what} (got "${raw}")`);
  return raw;
}

/** commander 4 reads a chat id ("-1001234567890") as short options: after --chat it is joined to it (--chat=-100…). */
function joinChatIds(argv: string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--chat' && /^-\d+$/.test(argv[i + 1] ?? '')) {
      joined.push(`--chat=${argv[i + 1]}`);
      i += 1;
    } else joined.push(argv[i]);
  }
  return joined;
}

/** `npm run leads -- <command>` on commander. The exit code: 0 done, 1 a problem (said), 2 a usage error, 130 Ctrl-C. */
export async function runCli(argv: string[], given: CliIo, ops: OpsCommands): Promise<number> {
  // Every line goes through terminalSafe: a chat title or a user name from Telegram, an error quoting a URL.
  const io: CliIo = { ...given, out: (line) => given.out(terminalSafe(line)), err: (line) => given.err(terminalSafe(line)) };
  const env = io.env;
  const path = env.DATABASE_PATH || './data/leads.sqlite';
  const url = env.DATABASE_URL || undefined;
  const location = url ?? path;
  // Set by the action commander runs (in a closure, so held in an object the compiler does not narrow).
  const chosen: { work: Promise<number> | null } = { work: null };
  const program = new Command(ROOT_NAME)
    .usage('<command> [options]')
    .description(
      'Stickers Leads ops commands. The database: DATABASE_URL (PostgreSQL) when set, else DATABASE_PATH (SQLite, default ./data/leads.sqlite).',
    )
    .storeOptionsAsProperties(false)
    .passCommandToAction(false)
    .exitOverride();
  // commander 4 passes extra words after the arguments as a last array: refused here.
  const command = <A extends unknown[]>(
    spec: string,
    description: string,
    options: [string, string, string?][],
    work: (...args: A) => Promise<number>,
  ) => {
    const sub = program.command(spec).description(description);
    for (const [flags, text, fallback] of options) sub.option(flags, text, fallback);
    return sub.action((...args: A) => {
      const extra = args.at(-1);
      if (Array.isArray(extra) && extra.length > 0)
        throw new CommanderError(USAGE_EXIT, 'leads.extra', `too many arguments for ${sub.name()}: ${extra.join(' ')}`);
      chosen.work = work(...args);
    });
  };

  command(
    'setup',
    'from TELEGRAM_BOT_TOKEN alone to the chat lines of .env: finds the group and topic, checks the rights, sends a test card',
    [
      ['--timeout <seconds>', 'the longest each wait lasts (the bot added, a message, the press)', '300'],
      ['--no-admin', 'skip the admin chat step'],
      ['--delete-webhook', 'delete a webhook that is set without asking (the server sets it again at its start)'],
      ['--drop-pending', 'go on even when button presses or commands wait for the server (they are dropped)'],
      ['--chat <chat id>', 'take only this group as the leads group (/stickers_chatid in it tells its id)'],
      ['--from <user id>', 'take only a group that this Telegram user (you) adds the bot to, or writes /stickers_chatid in'],
    ],
    (o: { timeout: string; admin: boolean; deleteWebhook?: boolean; dropPending?: boolean; chat?: string; from?: string }) =>
      runSetup(io, {
        timeoutSec: Number(matching(o.timeout, /^(?!0+$)\d{1,5}$/, '--timeout', 'whole seconds from 1')),
        admin: o.admin,
        deleteWebhook: o.deleteWebhook === true,
        dropPending: o.dropPending === true,
        chat: o.chat === undefined ? null : matching(o.chat, /^-?\d{1,20}$/, '--chat', 'a chat id like -1001234567890'),
        from: o.from === undefined ? null : Number(matching(o.from, /^(?!0+$)\d{1,15}$/, '--from', 'a Telegram user id like 123456789')),
      }),
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
    (key: string, options: { json?: boolean }) => ops.trace(location, key, options.json === true),
  );
  command('backup <file>', 'a consistent, checked copy of the live SQLite database (on PostgreSQL use pg_dump)', [], (file: string) => {
    if (!url) return ops.backup(path, file);
    io.err('backup copies the SQLite file; on PostgreSQL use pg_dump (docs/deployment.md)');
    return Promise.resolve(USAGE_EXIT);
  });
  command(
    'forget',
    "erase every lead and repeat of a person (needs the server's LEADS_IP_SALT)",
    [
      ['--phone <phone>', 'the phone as the form takes it: +7 916 555-12-34, 8 916 555-12-34 (LEADS_PHONE_REGION, RU)'],
      ['--telegram <name>', 'the Telegram username: @name'],
    ],
    (options: { phone?: string; telegram?: string }) => {
      if ((options.phone === undefined) === (options.telegram === undefined))
        throw new CommanderError(USAGE_EXIT, 'leads.forget', 'forget needs one of --phone <+7…> or --telegram <@name>');
      const [option, value] = options.phone !== undefined ? ['--phone', options.phone] : ['--telegram', options.telegram!];
      return ops.forget(location, option, value, Date.now(), env.LEADS_IP_SALT, env.LEADS_PHONE_REGION);
    },
  );
  command(
    'migrate-to-postgres [url]',
    'copy the SQLite file (DATABASE_PATH) into an empty PostgreSQL database (default: DATABASE_URL)',
    [],
    (target: string | undefined) => ops.migrateToPostgres(path, target ?? url),
  );
  command(
    'webhooks <action> <key>',
    'webhooks replay <key>: send webhook events again (an event by its id, or every event of a lead)',
    [],
    (action: string, key: string) => {
      if (action !== 'replay')
        throw new CommanderError(USAGE_EXIT, 'leads.webhooks', `unknown webhooks action: ${action} (webhooks replay <key>)`);
      return ops.webhooksReplay(location, key);
    },
  ).usage('replay <event id (evt_…) | lead number>');

  program
    .command('help [command]')
    .description('the help of a command')
    .action((name: string | undefined) => {
      const sub = (program as unknown as CommanderInternals).commands.find((c) => c.name() === name);
      if (name && !sub) throw new CommanderError(USAGE_EXIT, 'leads.unknownCommand', `unknown command: ${name}`);
      (sub ?? program).outputHelp();
      // Ends the parse here: commander would print the whole help once more after `help` alone.
      throw new CommanderError(0, 'commander.helpDisplayed', '(help)');
    });

  program.on('command:*', (args: string[]) => {
    throw new CommanderError(USAGE_EXIT, 'leads.unknownCommand', `unknown command: ${args[0]}`);
  });

  routeOutput(program, io);
  try {
    program.parse(['node', 'leads', ...joinChatIds(argv)]);
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help') return 0;
    // Usage errors that routeOutput printed already have their line; the CLI's own ones are printed here.
    if (err.code.startsWith('leads.')) {
      io.err(err.message);
      io.err('see: npm run leads -- --help');
    }
    return USAGE_EXIT;
  }
  if (!chosen.work) {
    program.outputHelp();
    return USAGE_EXIT;
  }
  return await chosen.work;
}
