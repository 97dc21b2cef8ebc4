/**
 * LEADS_TELEGRAM_LINK_ROOT: the root of `POST /leads`'s `telegram_link` (`<root>/<bot>?start=<payload>`), t.me unless
 * set; development points it at the sandbox's stand-in for t.me. The payload it carries binds as any other.
 */
import type { SandboxUser } from '@stickers/telegram-sandbox';
import { lead, memberActions, postLead, sandboxSuite } from './harness';

const VISITOR: SandboxUser = { id: 7101, is_bot: false, first_name: 'Анна', username: 'anna_root' };
const { sandbox, boot } = sandboxSuite((s) => s.state.addChat({ id: VISITOR.id, type: 'private', title: 'Анна' }));

describe('POST /leads: telegram_link under LEADS_TELEGRAM_LINK_ROOT', () => {
  it('https://t.me by default', async () => {
    const server = await boot();
    const answer = await postLead(server, lead());
    expect(String(answer.body.telegram_link)).toMatch(/^https:\/\/t\.me\/stickers_leads_bot\?start=[A-Za-z0-9_-]{32}$/);
  });

  it("the root set (the sandbox's t.me in development, a trailing slash dropped), and its payload binds the visitor", async () => {
    const root = `${sandbox.url}/sandbox/t.me`;
    const server = await boot({ polling: true, env: { LEADS_TELEGRAM_LINK_ROOT: `${root}/` } });
    const answer = await postLead(server, lead());
    const link = String(answer.body.telegram_link);
    const m = new RegExp(`^${root.replace(/[.]/g, '\\.')}/stickers_leads_bot\\?start=([A-Za-z0-9_-]{32})$`).exec(link);
    expect(m).not.toBeNull();
    expect(await memberActions(sandbox).command(VISITOR.id, `/start ${m![1]}`, VISITOR)).toContain(`#${answer.body.lead_number}`);
  });
});
