import type { ServerConfig } from '../config/config';
import { ApiError } from '../http/api-error';
import { LeadBodyPipe, LeadRequestDto } from './leads.dto';

const NOW = Date.UTC(2026, 11, 5, 12, 0);
const pipeFor = (leads: Partial<ServerConfig['leads']>) =>
  new LeadBodyPipe({ leads: { phoneRegion: 'RU', requiredContacts: 'both', requireConsent: false, ...leads } } as ServerConfig, {
    now: () => NOW,
  });
const AS_BODY = { type: 'custom', metatype: LeadRequestDto, data: undefined } as const;

/** The 422's text the pipe answers a body with, or 'passed'. */
async function answer(pipe: LeadBodyPipe, body: Record<string, unknown>): Promise<string> {
  try {
    await pipe.transform(body, AS_BODY);
    return 'passed';
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return `${err.status} ${JSON.stringify(err.body)}`;
  }
}

describe("LeadBodyPipe: POST /leads's body through LeadRequestDto's rules (shared's)", () => {
  it('names every refused field with its code in the order shared names them, late and consent last', async () => {
    const body = { name: 'A', telegram: '@ab', phone: '12', late: { route: 'nowhere' }, consent: 'yes', extra: 1 };
    expect(await answer(pipeFor({}), body)).toBe(
      '422 {"error":"invalid","errors":{"name":"too_short","telegram":"invalid","phone":"invalid","request_id":"required","late":"invalid","consent":"invalid"}}',
    );
    expect(await answer(pipeFor({ requireConsent: true }), { name: 'Анна', telegram: '@anna_k', phone: '+79991234567' })).toBe(
      '422 {"error":"invalid","errors":{"request_id":"required","consent":"required"}}',
    );
  });

  it('with any one contact, names a missing pair after source and before late, as shared does', async () => {
    const body = { name: 'Анна', request_id: 'nope', source: 7, late: 'soon' };
    expect(await answer(pipeFor({ requiredContacts: 'any' }), body)).toBe(
      '422 {"error":"invalid","errors":{"request_id":"invalid","source":"invalid","telegram":"required","phone":"required","late":"invalid"}}',
    );
  });

  it('hands a good body on as its checked submission, keys no rule names ignored', async () => {
    const body = { request_id: crypto.randomUUID(), name: 'Анна', telegram: '@anna_k', phone: '+79991234567', extra: 'kept' };
    const passed = await pipeFor({}).transform({ ...body }, AS_BODY);
    const { extra: _, ...fields } = body;
    expect(passed).toEqual({ lead: expect.objectContaining(fields), late: null, consent: null });
    expect(passed.lead).not.toHaveProperty('extra');
  });
});
