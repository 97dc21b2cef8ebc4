// Fast tier: the one policy for Telegram's answers to the outbox (docs/requirements.md §4.2–§4.7, §12.5), as a table.
import type { TelegramResult } from '../telegram/telegram-result';
import { nextStep, type NextStep, type OutboxCall } from './telegram-answer.policy';

const ANSWERS: Record<string, TelegramResult<unknown>> = {
  ok: { ok: true, value: { message_id: 1 } },
  not_modified: { ok: false, kind: 'not_modified', description: 'Bad Request: message is not modified' },
  flood: { ok: false, kind: 'flood', retryAfterSec: 7, description: 'Too Many Requests: retry after 7' },
  migrated: {
    ok: false,
    kind: 'migrated',
    newChatId: '-1009876',
    description: 'Bad Request: group chat was upgraded to a supergroup chat',
  },
  gone: { ok: false, kind: 'gone', description: 'Bad Request: message to edit not found' },
  too_long: { ok: false, kind: 'too_long', description: 'Bad Request: message is too long' },
  parse: { ok: false, kind: 'parse', description: "Bad Request: can't parse entities" },
  failed: { ok: false, kind: 'failed', description: '502: Bad Gateway' },
  refused: { ok: false, kind: 'refused', description: 'Bad Request: chat not found' },
  no_bot: { ok: false, kind: 'no_bot', description: 'TELEGRAM_BOT_TOKEN is not set' },
};

const CALLS: Record<string, OutboxCall> = {
  'publish html': { action: 'publish', form: 'html' },
  'publish html after a migration': { action: 'publish', form: 'html', afterMigration: true },
  'publish plain': { action: 'publish', form: 'plain' },
  'publish minimal': { action: 'publish', form: 'minimal' },
  'rewrite full': { action: 'rewrite', form: 'full' },
  'rewrite minimal': { action: 'rewrite', form: 'minimal' },
  'ping card': { action: 'ping', form: 'full' },
  'ping minimal card': { action: 'ping', form: 'minimal' },
  'ping reply': { action: 'ping', form: 'reply' },
  'adopt html': { action: 'adopt', form: 'html' },
  'adopt plain': { action: 'adopt', form: 'plain' },
  'adopt minimal': { action: 'adopt', form: 'minimal' },
  'answer reply': { action: 'answer', form: 'reply' },
};

type Short = 'success' | 'pause 7000' | 'follow -1009876' | 'general' | 'republish' | 'minimal' | 'plain' | 'new' | 'leave' | 'retry';

function short(step: NextStep): Short {
  switch (step.step) {
    case 'flood_pause':
      return `pause ${step.pauseMs}` as Short;
    case 'follow_migration':
      return `follow ${step.newChatId}` as Short;
    case 'minimal_card':
      return 'minimal';
    case 'plain_text':
      return 'plain';
    case 'publish_new':
      return 'new';
    case 'general_topic':
      return 'general';
    default:
      return step.step;
  }
}

// Columns: ok, not_modified, flood, migrated, gone, too_long, parse, failed (5xx, timeout), refused (other 4xx), no_bot.
const KINDS = ['ok', 'not_modified', 'flood', 'migrated', 'gone', 'too_long', 'parse', 'failed', 'refused', 'no_bot'] as const;
const TABLE: Record<string, Short[]> = {
  'publish html': ['success', 'retry', 'pause 7000', 'follow -1009876', 'retry', 'minimal', 'plain', 'retry', 'retry', 'retry'],
  'publish html after a migration': ['success', 'retry', 'pause 7000', 'retry', 'retry', 'minimal', 'plain', 'retry', 'retry', 'retry'],
  'publish plain': ['success', 'retry', 'pause 7000', 'retry', 'retry', 'minimal', 'retry', 'retry', 'retry', 'retry'],
  'publish minimal': ['success', 'retry', 'pause 7000', 'retry', 'retry', 'retry', 'retry', 'retry', 'retry', 'retry'],
  'rewrite full': ['success', 'success', 'pause 7000', 'follow -1009876', 'republish', 'minimal', 'retry', 'retry', 'retry', 'retry'],
  'rewrite minimal': ['success', 'success', 'pause 7000', 'follow -1009876', 'republish', 'retry', 'retry', 'retry', 'retry', 'retry'],
  'ping card': ['success', 'success', 'pause 7000', 'follow -1009876', 'republish', 'minimal', 'retry', 'retry', 'retry', 'retry'],
  'ping minimal card': ['success', 'success', 'pause 7000', 'follow -1009876', 'republish', 'retry', 'retry', 'retry', 'retry', 'retry'],
  'ping reply': ['success', 'retry', 'pause 7000', 'retry', 'retry', 'retry', 'retry', 'retry', 'retry', 'retry'],
  // The fallback message becomes the card unless Telegram refuses the edit for good; then a new card.
  'adopt html': ['success', 'success', 'pause 7000', 'new', 'new', 'minimal', 'plain', 'retry', 'new', 'retry'],
  'adopt plain': ['success', 'success', 'pause 7000', 'new', 'new', 'minimal', 'retry', 'retry', 'new', 'retry'],
  'adopt minimal': ['success', 'success', 'pause 7000', 'new', 'new', 'retry', 'retry', 'retry', 'new', 'retry'],
  'answer reply': ['success', 'retry', 'pause 7000', 'leave', 'leave', 'retry', 'retry', 'retry', 'leave', 'retry'],
};

describe('Telegram answer policy', () => {
  it.each(Object.keys(CALLS))('%s: every kind of answer', (name) => {
    expect(KINDS.map((kind) => short(nextStep(CALLS[name], ANSWERS[kind], 0)))).toEqual(TABLE[name]);
  });

  // A closed or deleted forum topic ("message thread not found", "TOPIC_CLOSED").
  it.each([
    ['publish html', 'general'],
    ['publish plain', 'general'],
    ['publish minimal', 'general'],
    ['ping reply', 'general'],
    ['answer reply', 'leave'],
    ['adopt html', 'new'],
    ['rewrite full', 'retry'],
    ['ping card', 'retry'],
  ])('%s: a topic that is gone → %s', (name, expected) => {
    const answer: TelegramResult<unknown> = { ok: false, kind: 'thread_gone', description: 'Bad Request: TOPIC_CLOSED' };
    expect(short(nextStep(CALLS[name], answer, 0))).toBe(expected);
  });

  it('a message already sent without its topic that is refused its topic again is a failure, not a loop', () => {
    const answer: TelegramResult<unknown> = { ok: false, kind: 'thread_gone', description: 'Bad Request: message thread not found' };
    expect(nextStep({ action: 'publish', form: 'html', inGeneral: true }, answer, 2)).toMatchObject({ step: 'retry', failures: 3 });
    expect(nextStep({ action: 'ping', form: 'reply', inGeneral: true }, answer, 0)).toMatchObject({ step: 'retry', failures: 1 });
  });

  it('a failure whose text says "message is too long" is too long, whatever its kind', () => {
    const answer: TelegramResult<unknown> = { ok: false, kind: 'failed', description: 'MESSAGE_TOO_LONG' };
    expect(nextStep({ action: 'publish', form: 'html' }, answer, 0).step).toBe('minimal_card');
    expect(nextStep({ action: 'rewrite', form: 'full' }, answer, 0).step).toBe('minimal_card');
    expect(nextStep({ action: 'ping', form: 'reply' }, answer, 0).step).toBe('retry');
  });

  it('retries on the schedule 5 s, 15 s, 60 s, 5 min, then 15 min, counting from the failures so far', () => {
    const delays = [0, 1, 2, 3, 4, 5, 9].map((before) => {
      const step = nextStep({ action: 'publish', form: 'html' }, ANSWERS.failed, before);
      return step.step === 'retry' ? [step.failures, step.delayMs] : null;
    });
    expect(delays).toEqual([
      [1, 5_000],
      [2, 15_000],
      [3, 60_000],
      [4, 300_000],
      [5, 900_000],
      [6, 900_000],
      [10, 900_000],
    ]);
  });

  it('a card failing for the 5th time and later alerts; a repeat gives up at its 5th failure; a rewrite does neither', () => {
    const retry = (call: OutboxCall, before: number) => nextStep(call, ANSWERS.failed, before);
    const publish: OutboxCall = { action: 'publish', form: 'html' };
    expect(retry(publish, 3)).toMatchObject({ step: 'retry', failures: 4, alert: false, giveUp: false });
    expect(retry(publish, 4)).toMatchObject({ step: 'retry', failures: 5, alert: true, giveUp: false });
    expect(retry(publish, 7)).toMatchObject({ step: 'retry', failures: 8, alert: true, giveUp: false });
    // Adopting the fallback message is the card's publication: the same alert.
    expect(retry({ action: 'adopt', form: 'html' }, 4)).toMatchObject({ step: 'retry', failures: 5, alert: true, giveUp: false });
    for (const ping of [
      { action: 'ping', form: 'full' },
      { action: 'ping', form: 'reply' },
      { action: 'answer', form: 'reply' },
    ] as OutboxCall[]) {
      expect(retry(ping, 3)).toMatchObject({ step: 'retry', failures: 4, delayMs: 300_000, alert: false, giveUp: false });
      expect(retry(ping, 4)).toMatchObject({ step: 'retry', failures: 5, alert: false, giveUp: true });
    }
    expect(retry({ action: 'rewrite', form: 'full' }, 9)).toMatchObject({ step: 'retry', failures: 10, alert: false, giveUp: false });
  });

  it('flood control pauses for exactly retry_after and is not a failure, whatever the failures so far', () => {
    const flood: TelegramResult<unknown> = { ok: false, kind: 'flood', retryAfterSec: 31, description: 'Too Many Requests' };
    expect(nextStep({ action: 'publish', form: 'minimal' }, flood, 4)).toEqual({ step: 'flood_pause', pauseMs: 31_000 });
    expect(nextStep({ action: 'ping', form: 'reply' }, flood, 4)).toEqual({ step: 'flood_pause', pauseMs: 31_000 });
  });
});
