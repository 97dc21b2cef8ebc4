import { ConfigError, loadServerConfig } from './config';

const BASE = { LEADS_SECRET: 'a-secret-of-16-chars-or-more', LEADS_IP_SALT: 'salt' };

function problems(env: Record<string, string>): string[] {
  try {
    loadServerConfig({ ...BASE, ...env });
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('the per-caller throttles in the configuration', () => {
  it('has a window and a limit per throttle by default', () => {
    expect(loadServerConfig(BASE).throttle).toEqual({ windowSec: 60, submit: 600, api: 120, export: 10, inbox: 300, webhook: 1200 });
  });

  it('reads each from its variable', () => {
    const config = loadServerConfig({
      ...BASE,
      LEADS_THROTTLE_WINDOW_SEC: '3600',
      LEADS_THROTTLE_SUBMIT: '100000',
      LEADS_THROTTLE_API: '7',
      LEADS_THROTTLE_EXPORT: '2',
      LEADS_THROTTLE_INBOX: '50',
      LEADS_THROTTLE_WEBHOOK: '90',
    });
    expect(config.throttle).toEqual({ windowSec: 3600, submit: 100000, api: 7, export: 2, inbox: 50, webhook: 90 });
  });

  it('a bad value is one problem line naming the variable', () => {
    expect(problems({ LEADS_THROTTLE_SUBMIT: '0' })).toEqual(['LEADS_THROTTLE_SUBMIT must be a whole number, at least 1 (got "0")']);
    expect(problems({ LEADS_THROTTLE_WINDOW_SEC: '1m' })).toEqual([
      'LEADS_THROTTLE_WINDOW_SEC must be a whole number from 1 to 86400 (got "1m")',
    ]);
    for (const name of ['LEADS_THROTTLE_API', 'LEADS_THROTTLE_EXPORT', 'LEADS_THROTTLE_INBOX', 'LEADS_THROTTLE_WEBHOOK']) {
      expect(problems({ [name]: 'many' })).toEqual([`${name} must be a whole number, at least 1 (got "many")`]);
    }
  });
});
