import type { OpsCommands } from '../../src/cli/program';

/** The database commands, for a test of another command (setup, doctor): each one run refuses with `why`. */
export function refusingOps(why: string): OpsCommands {
  const unused = () => Promise.reject(new Error(why));
  return { trace: unused, backup: unused, forget: unused, migrateToPostgres: unused, webhooksReplay: unused, retry: unused };
}
