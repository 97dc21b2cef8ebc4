import type { LeadEventKind } from '../src/database/schema';
import type { LeadStatus } from '../src/domain/lead-status';
import type { MessageMedia } from '../src/domain/lead-message';

/** Every text of the page, one object per locale (the card's words come from the server: `CardWords`); `GET /inbox/api/me` says which (`locale`), Russian by default. */
export interface Texts {
  lang: string;
  title: string;
  tabList: string;
  tabCharts: string;
  nav: string;
  loading: string;
  retry: string;
  noLaunch: string;
  /** In development (the server talks to the local sandbox): where a launch comes from instead, and the link's words. */
  noLaunchSandbox: string;
  sandboxLink: string;
  unauthorized: Record<'missing' | 'invalid' | 'expired', string>;
  forbidden: string;
  unavailable: string;
  /** 503 `membership_unknown`: Telegram did not answer whether the user is a member of the leads chats. */
  membershipUnknown: string;
  failed: string;
  /** A change refused: 403 (LEADS_MANAGER_IDS names others), 409 `anonymised` (erased meanwhile), 429. */
  actionForbidden: string;
  erasedMeanwhile: string;
  tooMany: string;
  /** The list's folded filters: the disclosure's words, with how many filters are on. */
  filters: (active: number) => string;
  search: string;
  searchHint: string;
  status: string;
  anyStatus: string;
  source: string;
  anySource: string;
  noSource: string;
  period: string;
  since: string;
  until: string;
  reset: string;
  csv: string;
  csvFailed: string;
  more: string;
  empty: string;
  /** The period's first day is after its last: nothing is asked for until one of them changes. */
  periodReversed: string;
  /** The API refused the filters (422 `invalid_query`): the fields it named, by their labels. */
  invalidFilter: (fields: string[]) => string;
  found: (n: number, more: boolean) => string;
  /** A lead's number in the list: #42. */
  leadNumber: (n: number) => string;
  /** In a lead's row: the visitor's messages the team has not answered yet. */
  waiting: (n: number) => string;
  lead: (n: number) => string;
  back: string;
  statusLabel: Record<LeadStatus, string>;
  statusButton: (from: LeadStatus, to: LeadStatus) => string;
  fields: {
    name: string;
    telegram: string;
    phone: string;
    date: string;
    guests: string;
    comment: string;
    created: string;
    received: string;
    published: string;
  };
  hiddenPii: string;
  /** A personal field of an erased lead (an empty field is «—»). */
  erasedValue: string;
  anonymised: (at: string) => string;
  sourceTitle: string;
  sourceFields: {
    landing: string;
    utm_source: string;
    utm_medium: string;
    utm_campaign: string;
    utm_content: string;
    utm_term: string;
    referrer: string;
  };
  consent: string;
  consentAccepted: (at: string) => string;
  consentNone: string;
  policy: string;
  repeats: string;
  noRepeats: string;
  /** A repeat's lines, as the card's repeat block says them. */
  repeatAt: (at: string) => string;
  repeatSame: string;
  repeatHidden: string;
  repeatByUsername: string;
  repeatByPhone: string;
  history: string;
  noHistory: string;
  historyLine: (status: string, by: string | null) => string;
  events: string;
  noEvents: string;
  /** What each event of a lead's story means, in words (the kinds of `lead_events`); `eventOther` for a kind unknown here. */
  eventKinds: Record<LeadEventKind, string>;
  eventOther: string;
  cardLink: string;
  noCard: string;
  actions: string;
  confirmStatus: (n: number, to: string) => string;
  statusChanged: (to: string) => string;
  conflict: (current: string) => string;
  erase: string;
  confirmErase: (n: number) => string;
  erased: string;
  confirm: string;
  cancel: string;
  notFound: string;
  chartsTitle: string;
  perDay: string;
  funnel: string;
  median: string;
  medianNone: string;
  duration: (seconds: number) => string;
  legend: string;
  /** The legend's entry for the sources folded together past the sixth colour. */
  otherSources: (count: number) => string;
  /** The lead's conversation with the visitor through the bot. */
  conversation: string;
  conversationWith: (who: string) => string;
  /** After conversationWith: the account is not the username the form gave (as the card warns). */
  telegramDiffers: (typed: string) => string;
  /** An erased lead's conversation: deleted with it. */
  conversationErased: string;
  conversationNotBound: string;
  conversationStopped: string;
  noMessages: string;
  messageIn: string;
  messageOut: string;
  /** A message's media as the list names it (the text, if any, follows): the server's words (`CardWords`). */
  media: Record<MessageMedia, string>;
  /** A team message's state: delivered to the visitor, or not. */
  messageState: Record<'queued' | 'delivered' | 'failed', string>;
  /** A visitor message's state: shown in the group under the card, or not (the team reads it here all the same). */
  messageInState: Record<'queued' | 'delivered' | 'failed', string>;
  /** Why a message failed, from the reason the server stored (in English, as the API gives it). */
  messageFailed: (error: string | null) => string;
  messageLabel: string;
  /** Said when «Отправить» is pressed with nothing (or only spaces) in the box. */
  messageEmpty: string;
  messagePlaceholder: string;
  send: string;
  sent: string;
  notBound: string;
}

/** The lead's own fields, as the card labels them. */
export type CardField = 'name' | 'telegram' | 'phone' | 'date' | 'guests' | 'comment';

/** A locale's own texts: all but the card's words (`CardWords`). */
export type PageTexts = Omit<Texts, 'statusLabel' | 'statusButton' | 'fields' | 'media'> & { fields: Omit<Texts['fields'], CardField> };

/**
 * The status names, the card buttons' words, the card's field labels and the media's names, as the server's catalogue (LEADS_LOCALE) says
 * them: `GET /inbox/api/me` gives them, so the page and the cards in the group never word them two ways.
 */
export interface CardWords {
  statuses: Record<LeadStatus, string>;
  buttons: Partial<Record<LeadStatus, Partial<Record<LeadStatus, string>>>>;
  fields: Record<CardField, string>;
  /** As the group names a visitor's media it cannot copy with a caption. */
  media: Record<MessageMedia, string>;
}
