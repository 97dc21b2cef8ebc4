/**
 * `npm run leads -- trace <key>`: what it says of a key that is no key at all, and how it prints values that came from
 * outside (a user name from Telegram, an error's text) to the operator's terminal.
 */
import { formatTrace } from '../src/trace/trace-format';
import { type LeadTrace, TraceService } from '../src/trace/trace.service';
import type { LeadPagesRepository } from '../src/repositories/lead-pages.repository';

/** No key of these forms reaches the database: a repository that is never asked. */
const nothingAsked = new Proxy({} as LeadPagesRepository, {
  get: (_target, name) => () => Promise.reject(new Error(`the database was asked (${String(name)})`)),
});

describe('trace: a key that is neither a request_id nor a lead number', () => {
  it.each(['hello', '42a', '#0', '0f8fad5b-d9cb-469f-a165'])('"%s": says what a key looks like', async (key) => {
    const trace = await new TraceService(nothingAsked).read(key);
    expect(trace).toEqual({ found: false, key, message: expect.stringMatching(/^not a request_id or a lead number: /) });
    expect(formatTrace(trace)).toBe(
      `${key}: not a request_id or a lead number: give the request_id the landing or the integration sent ` +
        '(a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e) or the lead number of its card (42 or #42)',
    );
  });
});

describe('trace: what came from outside is printed terminal-safe', () => {
  it('a status changer whose name drives the terminal, and an error with a password in a URL', () => {
    const trace: LeadTrace = {
      found: true,
      key: '7',
      matched: 'lead_number',
      lead: {
        lead_number: 7,
        request_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
        created_at: 0,
        status: 'new',
        published_at: null,
        chat_id: null,
        message_id: null,
        card_format: null,
        publish_attempts: 1,
        last_error: 'request to http://apiuser:APIPASSWORD@10.0.0.1/bot1:[REDACTED]/sendMessage failed',
        next_attempt_at: 0,
        reminded_at: null,
        anonymised_at: null,
        received_at: null,
        late: null,
        fallback: null,
      },
      repeats: [],
      status_history: [{ at: 0, from: 'new', to: 'in_progress', by: '\u001b]0;x\u0007\u001b[2J\u202EМария', user_id: 5 }],
      events: [],
      messages: [],
    };
    const lines = formatTrace(trace).split('\n');
    expect(lines).toContain('    1970-01-01T00:00:00.000Z new → in_progress by \\x1B]0;x\\x07\\x1B[2J\\u202EМария (5)');
    expect(lines).toContainEqual(
      expect.stringContaining('last error: request to http://apiuser@10.0.0.1/bot1:[REDACTED]/sendMessage failed'),
    );
    for (const line of lines) expect(line).not.toMatch(/[\p{Cc}\p{Cf}]|APIPASSWORD/u);
  });
});

describe('trace: a card not tried yet', () => {
  // Its outbox row is due from the start (next_at 0): the line said "next attempt 1970-01-01T00:00:00.000Z".
  it('says its next attempt is due now', () => {
    const at = Date.UTC(2026, 11, 6, 12, 0);
    const trace: LeadTrace = {
      found: true,
      key: '3',
      matched: 'lead_number',
      lead: {
        lead_number: 3,
        request_id: '0f8fad5b-d9cb-469f-a165-70867728950e',
        created_at: at,
        status: 'new',
        published_at: null,
        chat_id: null,
        message_id: null,
        card_format: null,
        publish_attempts: 0,
        last_error: null,
        next_attempt_at: 0,
        reminded_at: null,
        anonymised_at: null,
        received_at: null,
        late: null,
        fallback: null,
      },
      repeats: [],
      status_history: [],
      events: [],
      messages: [],
    };
    expect(formatTrace(trace).split('\n')).toContain('  card          not published: 0 attempt(s), last error: —, next attempt due now');
    trace.lead = { ...trace.lead, publish_attempts: 1, next_attempt_at: at + 5000 };
    expect(formatTrace(trace)).toContain('next attempt 2026-12-06T12:00:05.000Z');
  });
});

describe('trace: the conversation', () => {
  it('one line per message, without its text', () => {
    const trace: LeadTrace = {
      found: true,
      key: '8',
      matched: 'lead_number',
      lead: {
        lead_number: 8,
        request_id: '0f8fad5b-d9cb-469f-a165-70867728950f',
        created_at: 0,
        status: 'new',
        published_at: 0,
        chat_id: '-100',
        message_id: 3,
        card_format: 'html',
        publish_attempts: 0,
        last_error: null,
        next_attempt_at: null,
        reminded_at: null,
        anonymised_at: null,
        received_at: null,
        late: null,
        fallback: null,
      },
      repeats: [],
      status_history: [],
      events: [],
      messages: [
        { at: 1000, direction: 'in', media: 'photo', state: 'delivered', error: null },
        { at: 2000, direction: 'out', media: null, state: 'failed', error: 'the visitor blocked the bot' },
      ],
    };
    const lines = formatTrace(trace).split('\n');
    expect(lines.slice(lines.indexOf('  messages      2'))).toEqual([
      '  messages      2',
      '    1970-01-01T00:00:01.000Z visitor → team, photo: delivered',
      '    1970-01-01T00:00:02.000Z team → visitor, text: failed (the visitor blocked the bot)',
    ]);
  });
});
