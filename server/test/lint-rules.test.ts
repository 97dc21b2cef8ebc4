// ESLint's rules of the tests themselves (eslint.config.mjs), as the real configuration gives them for a server test file.
import { resolve } from 'node:path';
import { ESLint, Linter } from 'eslint';

const ROOT = resolve(__dirname, '..', '..');

/** The messages the configuration's `rule` gives `code` as a server test file. */
async function messages(rule: string, code: string): Promise<string[]> {
  const config = (await new ESLint({ cwd: ROOT }).calculateConfigForFile('server/test/planted.test.ts')) as Linter.Config;
  const found = new Linter().verify(code, { rules: { [rule]: config.rules![rule] } });
  return found.map((m) => m.message);
}

describe('the rules of the tests', () => {
  it('refuse a console replaced by hand in a test file, and let captureConsole do it', async () => {
    const refused = 'Capture the console with captureConsole (server/test/support/console.ts): it gives it back.';
    const code = [
      "jest.spyOn(console, 'error').mockImplementation(() => undefined);",
      "jest.replaceProperty(console, 'log', () => undefined);",
      'console.warn = () => undefined;',
      "jest.spyOn(process, 'exit');",
      "void captureConsole(async () => console.log('fine'));",
    ].join('\n');
    expect(await messages('no-restricted-syntax', code)).toEqual([refused, refused, refused]);
  });
});
