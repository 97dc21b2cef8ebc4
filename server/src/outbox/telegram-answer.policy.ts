import type { TelegramFailure, TelegramResult } from '../telegram/telegram-result';
import { ALERT_AFTER_FAILURES, REPEAT_MAX_FAILURES, retryDelayMs } from './retry-schedule';

/**
 * What the outbox was doing when Telegram answered (`ping`: a repeat's card edit, then its reply; `adopt`: a fallback
 * message edited into the card). `afterMigration`: it followed one migration; `inGeneral`: it left its topic once.
 */
export type PublishCall = { action: 'publish'; form: 'html' | 'plain' | 'minimal'; afterMigration?: boolean; inGeneral?: boolean };
export type EditCall = { action: 'rewrite' | 'ping'; form: 'full' | 'minimal' };
type ReplyCall = { action: 'ping'; form: 'reply'; inGeneral?: boolean };
type AdoptCall = { action: 'adopt'; form: 'html' | 'plain' | 'minimal' };
type AnswerCall = { action: 'answer'; form: 'reply' };
export type OutboxCall = PublishCall | EditCall | ReplyCall | AdoptCall | AnswerCall;

/** What comes next (§4.2–§4.7, §12.5); a `retry` counts (`alert`: a card keeps failing; `giveUp`: a ping's last). */
type Bare = 'success' | 'general_topic' | 'republish' | 'minimal_card' | 'plain_text' | 'publish_new' | 'leave';
export type NextStep =
  | { [S in Bare]: { step: S } }[Bare]
  | { step: 'flood_pause'; pauseMs: number }
  | { step: 'follow_migration'; newChatId: string }
  | { step: 'retry'; failures: number; delayMs: number; alert: boolean; giveUp: boolean };
type Step<S extends NextStep['step']> = Extract<NextStep, { step: S }>;
export type FloodPause = Step<'flood_pause'>;
export type Retry = Step<'retry'>;
export type EditStep = Step<'success' | 'flood_pause' | 'follow_migration' | 'republish' | 'minimal_card' | 'retry'>;
type ReplyFailureStep = Step<'flood_pause' | 'general_topic' | 'retry'>;
type AnswerFailureStep = Step<'flood_pause' | 'leave' | 'retry'>;

type Fallback = Bare | 'follow_migration';
type AnswerKind = TelegramFailure['kind'];

// "Message is not modified": the card already shows the lead as it is.
const EDIT_MINIMAL: Partial<Record<AnswerKind, Fallback>> = { not_modified: 'success', gone: 'republish', migrated: 'follow_migration' };
const EDIT_FULL: Partial<Record<AnswerKind, Fallback>> = { ...EDIT_MINIMAL, too_long: 'minimal_card' };

// The fallback message already showing the card is a card adopted before its record was written (a crash).
const ADOPT_ANY: Partial<Record<AnswerKind, Fallback>> = {
  not_modified: 'success',
  gone: 'publish_new',
  refused: 'publish_new',
  migrated: 'publish_new',
  thread_gone: 'publish_new',
};

/** Each call's `action:form` (`publish:html`, `ping:reply`, …), one union member at a time. */
type CallKey<C extends OutboxCall = OutboxCall> = C extends OutboxCall ? `${C['action']}:${C['form']}` : never;

/**
 * Per call, the answers that are not simply a failure on the schedule (`ok` is success, a 429 a flood pause everywhere).
 * A fallback form is tried once: a plain card refused again, a minimal card refused, a second migration all fail.
 */
const TABLE: Record<CallKey, Partial<Record<AnswerKind, Fallback>>> = {
  // Telegram counts the text after parsing the markup: a card too long as HTML is as long as plain text.
  // A closed or deleted topic never keeps a card out of the chat (its General topic takes it).
  'publish:html': { migrated: 'follow_migration', too_long: 'minimal_card', parse: 'plain_text', thread_gone: 'general_topic' },
  'publish:plain': { too_long: 'minimal_card', thread_gone: 'general_topic' },
  'publish:minimal': { thread_gone: 'general_topic' },
  'rewrite:full': EDIT_FULL,
  'rewrite:minimal': EDIT_MINIMAL,
  'ping:full': EDIT_FULL,
  'ping:minimal': EDIT_MINIMAL,
  'ping:reply': { thread_gone: 'general_topic' },
  // A 5xx or a timeout is retried on the schedule as any card; a refusal does not keep the lead without a card.
  'adopt:html': { ...ADOPT_ANY, too_long: 'minimal_card', parse: 'plain_text' },
  'adopt:plain': { ...ADOPT_ANY, too_long: 'minimal_card' },
  'adopt:minimal': ADOPT_ANY,
  // The fallback message's own topic is closed: it is left as it is, like one Telegram refuses a reply to.
  'answer:reply': { gone: 'leave', refused: 'leave', migrated: 'leave', thread_gone: 'leave' },
};

/** Telegram's "text over 4096 characters", also when only its description says so (§12.5). */
const TOO_LONG = /message is too long|MESSAGE_TOO_LONG/i;

function retry(call: OutboxCall, failuresSoFar: number): Retry {
  const failures = failuresSoFar + 1;
  return {
    step: 'retry',
    failures,
    delayMs: retryDelayMs(failures),
    alert: (call.action === 'publish' || call.action === 'adopt') && failures >= ALERT_AFTER_FAILURES,
    giveUp: (call.action === 'ping' || call.action === 'answer') && failures >= REPEAT_MAX_FAILURES,
  };
}

/** The one policy for Telegram's answers to the outbox, pure; `failuresSoFar` counts what is being done's earlier failures. */
export function nextStep(call: EditCall & { form: 'full' }, answer: TelegramResult<unknown>, failuresSoFar: number): EditStep;
export function nextStep(
  call: EditCall & { form: 'minimal' },
  answer: TelegramResult<unknown>,
  failuresSoFar: number,
): Exclude<EditStep, Step<'minimal_card'>>;
export function nextStep(call: ReplyCall & { inGeneral: true }, answer: TelegramFailure, failuresSoFar: number): FloodPause | Retry;
export function nextStep(call: ReplyCall, answer: TelegramFailure, failuresSoFar: number): ReplyFailureStep;
export function nextStep(call: AnswerCall, answer: TelegramFailure, failuresSoFar: number): AnswerFailureStep;
export function nextStep(call: OutboxCall, answer: TelegramResult<unknown>, failuresSoFar: number): NextStep;
export function nextStep(call: OutboxCall, answer: TelegramResult<unknown>, failuresSoFar: number): NextStep {
  if (answer.ok) return { step: 'success' };
  if (answer.kind === 'flood') return { step: 'flood_pause', pauseMs: answer.retryAfterSec * 1000 };
  const kind = answer.kind !== 'migrated' && TOO_LONG.test(answer.description) ? 'too_long' : answer.kind;
  const fallback = TABLE[`${call.action}:${call.form}` as CallKey][kind];
  switch (fallback) {
    case 'follow_migration':
      if (answer.kind !== 'migrated' || (call.action === 'publish' && call.afterMigration)) return retry(call, failuresSoFar);
      return { step: 'follow_migration', newChatId: answer.newChatId };
    case 'general_topic':
      // Once: a message already without its topic that is refused again is a failure.
      if ('inGeneral' in call && call.inGeneral) return retry(call, failuresSoFar);
      return { step: 'general_topic' };
    case undefined:
      return retry(call, failuresSoFar);
    default:
      return { step: fallback };
  }
}
