import type { Migration } from 'kysely';
import * as initial from './2026-11-29-0001-initial';
import * as outbox from './2026-11-29-0002-outbox';
import * as botHousekeeping from './2026-11-29-0003-bot-housekeeping';
import * as leadEvents from './2026-11-29-0004-lead-events';
import * as lateLeads from './2026-12-01-0005-late-leads';
import * as leadSource from './2026-12-01-0006-lead-source';
import * as leases from './2026-12-01-0007-leases';
import * as webhooks from './2026-12-01-0008-webhooks';
import * as cardThread from './2026-12-01-0009-card-thread';
import * as rateMinutes from './2026-12-01-0010-rate-minutes';
import * as submitFunction from './2026-12-01-0011-submit-function';
import * as telegramUpdates from './2026-12-01-0012-telegram-updates';
import * as erasedContacts from './2026-12-01-0013-erased-contacts';
import * as submitFields from './2026-12-01-0014-submit-fields';
import * as leadConsent from './2026-12-02-0015-lead-consent';
import * as leadCaptcha from './2026-12-02-0016-lead-captcha';
import * as submitDecision from './2026-12-05-0017-submit-decision';
import * as outboxQueue from './2026-12-05-0018-outbox';
import * as leadUpdatedAt from './2026-12-05-0019-lead-updated-at';
import * as telegramLinks from './2026-12-05-0021-telegram-links';
import * as leadMessages from './2026-12-05-0022-lead-messages';
import * as submitBatch from './2026-12-05-0023-submit-batch';
import * as telegramLinkChoice from './2026-12-05-0024-telegram-link-choice';
import * as messageRecipient from './2026-12-06-0025-message-recipient';
import * as leadUpdatedAtMoves from './2026-12-06-0026-lead-updated-at-moves';
import * as leadEventsKind from './2026-12-07-0027-lead-events-kind';
import * as leadNotices from './2026-12-07-0028-lead-notices';
import * as outboxIndexes from './2026-12-07-0029-outbox-indexes';
import * as leadCardIndex from './2026-12-07-0030-lead-card-index';
import * as webhookEventsAt from './2026-12-07-0031-webhook-events-at';
import * as newLeadWrites from './2026-12-08-0032-new-lead-writes';
import * as reminderDue from './2026-12-08-0033-reminder-due';

/** Every migration, by date-prefixed name. Append only. */
export const MIGRATIONS: Record<string, Migration> = {
  '2026-11-29-0001-initial': initial,
  '2026-11-29-0002-outbox': outbox,
  '2026-11-29-0003-bot-housekeeping': botHousekeeping,
  '2026-11-29-0004-lead-events': leadEvents,
  '2026-12-01-0005-late-leads': lateLeads,
  '2026-12-01-0006-lead-source': leadSource,
  '2026-12-01-0007-leases': leases,
  '2026-12-01-0008-webhooks': webhooks,
  '2026-12-01-0009-card-thread': cardThread,
  '2026-12-01-0010-rate-minutes': rateMinutes,
  '2026-12-01-0011-submit-function': submitFunction,
  '2026-12-01-0012-telegram-updates': telegramUpdates,
  '2026-12-01-0013-erased-contacts': erasedContacts,
  '2026-12-01-0014-submit-fields': submitFields,
  '2026-12-02-0015-lead-consent': leadConsent,
  '2026-12-02-0016-lead-captcha': leadCaptcha,
  '2026-12-05-0017-submit-decision': submitDecision,
  '2026-12-05-0018-outbox': outboxQueue,
  '2026-12-05-0019-lead-updated-at': leadUpdatedAt,
  '2026-12-05-0021-telegram-links': telegramLinks,
  '2026-12-05-0022-lead-messages': leadMessages,
  '2026-12-05-0023-submit-batch': submitBatch,
  '2026-12-05-0024-telegram-link-choice': telegramLinkChoice,
  '2026-12-06-0025-message-recipient': messageRecipient,
  '2026-12-06-0026-lead-updated-at-moves': leadUpdatedAtMoves,
  '2026-12-07-0027-lead-events-kind': leadEventsKind,
  '2026-12-07-0028-lead-notices': leadNotices,
  '2026-12-07-0029-outbox-indexes': outboxIndexes,
  '2026-12-07-0030-lead-card-index': leadCardIndex,
  '2026-12-07-0031-webhook-events-at': webhookEventsAt,
  '2026-12-08-0032-new-lead-writes': newLeadWrites,
  '2026-12-08-0033-reminder-due': reminderDue,
};
