// The house, enforced on every `npm run lint` (docs/architecture.md, "Server layers"): `node scripts/depcruise.mjs` cruises
// server/src and shared/src with these rules; any violation fails the lint. Type-only imports count everywhere except
// where a rule says so (services may name the database's types).

/** The bottom of the server: the domain's words, configuration, the clock and the message catalogues. */
const BOTTOM = '^server/src/(domain|config|clock|i18n)/';
const CONTROLLER = '^server/src/.+\\.controller\\.ts$';
const BOT_HANDLER = '^server/src/bot/[^/]+\\.update\\.ts$';
const SERVICE = '^server/src/.+\\.service\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No module reaches itself through its imports (type-only imports included).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'bottom-imports-nothing-above',
      severity: 'error',
      comment: 'domain/, config/, clock/ and i18n/ import only each other, shared/, node and packages: everything else stands on them.',
      from: { path: BOTTOM },
      to: { path: '^server/src/', pathNot: BOTTOM },
    },
    {
      name: 'http-imports-no-doors',
      severity: 'error',
      comment:
        'http/ (the guard, the error filter, the body reader) serves the doors: it imports none of their folders, only the bottom, the database, repositories, alerts and metrics.',
      from: { path: '^server/src/http/' },
      to: { path: '^server/src/', pathNot: ['^server/src/(http|database|repositories|alerts|observability)/', BOTTOM] },
    },
    {
      name: 'access-imports-no-doors',
      severity: 'error',
      comment:
        'access/ (the secret guard, its lockout, the visitor hasher, the fallback signature, the inbox guard) stands below the doors that use it: it imports none of their folders.',
      from: { path: '^server/src/access/' },
      to: { path: '^server/src/(leads|inbox|export|webhooks|outbox|bot|lead-status|trace|conversations|health)/' },
    },
    {
      name: 'observability-health-and-housekeeping-import-no-features',
      severity: 'error',
      comment:
        'observability/, health/ and housekeeping/ stand below the inbox and the outbox (features): they import nothing from inbox/ or outbox/; what they need lives lower (charts/, http/, repositories/).',
      from: { path: '^server/src/(observability|health|housekeeping)/' },
      to: { path: '^server/src/(inbox|outbox)/' },
    },
    {
      name: 'repositories-import-no-services',
      severity: 'error',
      comment: 'Services call repositories, never the other way round.',
      from: { path: '^server/src/repositories/' },
      to: { path: SERVICE },
    },
    {
      name: 'controllers-call-services-only',
      severity: 'error',
      comment: 'Controllers and bot handlers call services; they never touch repositories or the database.',
      from: { path: [CONTROLLER, BOT_HANDLER] },
      to: { path: ['^server/src/(repositories|database)/', '(^|/)node_modules/(kysely|better-sqlite3)/'] },
    },
    {
      name: 'services-reach-the-database-through-repositories',
      severity: 'error',
      comment: "Services don't hold the connection: kysely, better-sqlite3 and database/database* are fine as types only.",
      from: { path: SERVICE },
      to: {
        path: ['^server/src/database/database(\\.module)?\\.ts$', '(^|/)node_modules/(kysely|better-sqlite3)/'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'only-telegram-imports-telegraf',
      severity: 'error',
      comment: 'Only server/src/telegram/ talks to telegraf: everyone else calls TelegramGateway.',
      from: { pathNot: '^server/src/telegram/' },
      to: { path: '(^|/)node_modules/telegraf/' },
    },
    {
      name: 'nestjs-telegraf-in-bot-and-telegram-only',
      severity: 'error',
      comment: 'The nestjs-telegraf decorators belong to the bot handlers (bot/) and the gateway (telegram/).',
      from: { pathNot: '^server/src/(bot|telegram)/' },
      to: { path: '(^|/)node_modules/nestjs-telegraf/' },
    },
    {
      name: 'no-undeclared-packages',
      severity: 'error',
      comment: "A package imported is one its workspace's package.json names (not one that happens to be hoisted).",
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'no-unresolvable-imports',
      severity: 'error',
      comment: 'Every import resolves to a file or a package.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-dev-dependencies-at-run-time',
      severity: 'error',
      comment: 'What the built server runs needs only its dependencies: a devDependency is fine as types only.',
      from: {},
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-unreachable-files',
      severity: 'error',
      comment: "Every source file is reached from the server's or the CLI's entry point: no dead file.",
      from: { path: '^server/src/(main|cli)\\.ts$' },
      to: { path: '^server/src/', pathNot: '^server/src/(main|cli)\\.ts$', reachable: false },
    },
    {
      name: 'no-unreachable-shared-files',
      severity: 'error',
      comment: "Every file of shared/src is reached from its one entry point, the package's index.",
      from: { path: '^shared/src/index\\.ts$' },
      to: { path: '^shared/src/', pathNot: '^shared/src/index\\.ts$', reachable: false },
    },
  ],
  options: {
    doNotFollow: { path: ['(^|/)node_modules/', '(^|/)shared/dist/'] },
    exclude: { path: ['\\.test\\.ts$'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'server/tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['require', 'node', 'default', 'types'] },
    combinedDependencies: true,
    preserveSymlinks: false,
  },
};
