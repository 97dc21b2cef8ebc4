/**
 * Phone numbers as typed (docs/requirements.md §2.2): the action reads a national spelling in LEADS_PHONE_REGION and
 * sends E.164 to the server; the loader hands the region to the browser's checks; a bad region stops the start.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LandingConfigError, loadLandingEnv } from '~/env.server';
import { loader } from '~/routes/_index';
import { postForm } from './post-form';
import { captureConsole, configuredEnv, setEnv, standIns, type StandInRequest } from './support';

const received: StandInRequest[] = [];
const { sandbox, leads } = standIns((request) => {
  received.push(request);
  return { status: 201, body: { lead_number: 1, duplicate: false, repeat: false } };
});

const VISITOR = { name: 'Анна Ким', telegram: '@anna_k', phone: '8 (916) 555 12 34' };
let ip = 0;
const submit = (values: Record<string, string>) => postForm({ values, socket: `198.51.100.${++ip}` });

beforeEach(() => {
  setEnv(configuredEnv(leads.url, sandbox));
  captureConsole('log');
  received.length = 0;
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('the action', () => {
  it('accepts 8 (916) 555 12 34 and sends +79165551234 to the server', async () => {
    const { result } = await submit(VISITOR);
    expect(result.state).toBe('sent');
    expect(received).toHaveLength(1);
    expect(received[0].body).toMatchObject({ phone: '+79165551234' });
  });

  it.each([
    '8 916 555-12-34',
    '89165551234',
    '9165551234',
    '+7 916 555-12-34',
    '0079165551234',
    '8.916.555.12.34',
    '+7 916 555\u201112\u201134',
    '\uff0b\uff17 \uff19\uff11\uff16 \uff15\uff15\uff15 \uff11\uff12 \uff13\uff14',
  ])('%j is sent as +79165551234', async (phone) => {
    expect((await submit({ ...VISITOR, phone })).result.state).toBe('sent');
    expect(received[0].body).toMatchObject({ phone: '+79165551234' });
  });

  it('refuses a number that is not valid, sends nothing, and keeps what was typed', async () => {
    const { result } = await submit({ ...VISITOR, phone: '8 000 000-00-00' });
    expect(result).toMatchObject({ state: 'invalid', errors: { phone: 'invalid' }, values: { phone: '8 000 000-00-00' } });
    expect(received).toHaveLength(0);
  });

  it('LEADS_PHONE_REGION=DE: a German national number is sent as +49…, and the loader hands DE to the browser', async () => {
    setEnv(configuredEnv(leads.url, sandbox, { LEADS_PHONE_REGION: 'DE' }));
    expect((await submit({ ...VISITOR, phone: '030 12345678' })).result.state).toBe('sent');
    expect(received[0].body).toMatchObject({ phone: '+493012345678' });
    const page = loader({ request: new Request('http://landing.test/'), context: {}, params: {} }) as unknown as {
      data: { phoneRegion: string };
    };
    expect(page.data.phoneRegion).toBe('DE');
  });
});

describe('LEADS_PHONE_REGION', () => {
  it('RU by default (and so in the loader); a code libphonenumber does not know is one line at start', () => {
    expect(loadLandingEnv({}).phoneRegion).toBe('RU');
    expect(loadLandingEnv({ LEADS_PHONE_REGION: 'de' }).phoneRegion).toBe('DE');
    const page = loader({ request: new Request('http://landing.test/'), context: {}, params: {} }) as unknown as {
      data: { phoneRegion: string };
    };
    expect(page.data.phoneRegion).toBe('RU');
    let problems: string[] = [];
    try {
      loadLandingEnv({ LEADS_PHONE_REGION: 'XX' });
    } catch (err) {
      problems = (err as LandingConfigError).problems;
    }
    expect(problems).toEqual([
      'LEADS_PHONE_REGION must be a two-letter country code (ISO 3166) libphonenumber knows, like RU or DE (got "XX")',
    ]);
  });
});
