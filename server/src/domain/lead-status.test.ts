import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LEAD_TRANSITIONS } from './lead-status';

describe('the status changes', () => {
  it('are the ones docs/api.md lists for POST /leads/{n}/status, in the card’s order', () => {
    const doc = readFileSync(join(__dirname, '../../../docs/api.md'), 'utf8').replace(/\s+/g, ' ');
    const listed = /The changes the card offers, from each status: (.*?)\./.exec(doc)?.[1] ?? '';
    const documented = Object.fromEntries(
      listed.split('; ').map((entry) => {
        const [from, to] = entry.split(' → ');
        return [from.replaceAll('`', ''), to.split(', ').map((s) => s.replaceAll('`', ''))];
      }),
    );
    expect(documented).toEqual(LEAD_TRANSITIONS);
  });
});
