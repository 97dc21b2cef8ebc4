// Fast tier: how Telegram's errors are read (the outbox's policy decides on the kinds).
import { classifyTelegramError } from './telegram-result';

const telegramError = (error_code: number, description: string, parameters?: Record<string, number>) => ({
  response: { error_code, description, ...(parameters ? { parameters } : {}) },
});

describe('classifyTelegramError', () => {
  it('a 5xx or a timeout may pass: failed; another 4xx will be refused again: refused', () => {
    expect(classifyTelegramError(telegramError(502, 'Bad Gateway'))).toEqual({
      ok: false,
      kind: 'failed',
      description: '502: Bad Gateway',
    });
    expect(classifyTelegramError({ name: 'AbortError', message: 'This operation was aborted' })).toMatchObject({ kind: 'failed' });
    expect(classifyTelegramError(telegramError(400, 'Bad Request: chat not found'))).toEqual({
      ok: false,
      kind: 'refused',
      description: '400: Bad Request: chat not found',
    });
    expect(classifyTelegramError(telegramError(403, 'Forbidden: bot is not a member of the supergroup chat'))).toMatchObject({
      kind: 'refused',
    });
  });

  it('a message that cannot be edited, or replied to, is gone (the fallback message of another bot, or deleted)', () => {
    for (const description of [
      "Bad Request: message can't be edited",
      'Bad Request: message to edit not found',
      'Bad Request: message to be replied not found',
    ]) {
      expect(classifyTelegramError(telegramError(400, description))).toEqual({ ok: false, kind: 'gone', description });
    }
  });

  it('a forum topic that is closed or deleted: thread_gone, not a refusal', () => {
    for (const description of ['Bad Request: message thread not found', 'Bad Request: TOPIC_CLOSED', 'Bad Request: TOPIC_DELETED']) {
      expect(classifyTelegramError(telegramError(400, description))).toEqual({ ok: false, kind: 'thread_gone', description });
    }
  });

  it('flood control and migration keep their kinds', () => {
    expect(classifyTelegramError(telegramError(429, 'Too Many Requests: retry after 3', { retry_after: 3 }))).toMatchObject({
      kind: 'flood',
      retryAfterSec: 3,
    });
    expect(
      classifyTelegramError(telegramError(400, 'Bad Request: group chat was upgraded', { migrate_to_chat_id: -100777 })),
    ).toMatchObject({
      kind: 'migrated',
      newChatId: '-100777',
    });
  });
});

describe("a network error's URL in the description (the outbox's last_error, the logs)", () => {
  it("loses TELEGRAM_API_ROOT's password", () => {
    const err = new Error(
      'request to http://apiuser:APIPASSWORD@10.0.0.1:8081/bot1:[REDACTED]/sendMessage failed, reason: connect ECONNREFUSED',
    );
    expect(classifyTelegramError(err)).toEqual({
      ok: false,
      kind: 'failed',
      description: 'request to http://apiuser@10.0.0.1:8081/bot1:[REDACTED]/sendMessage failed, reason: connect ECONNREFUSED',
    });
  });
});
