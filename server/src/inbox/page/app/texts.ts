import type { LeadEventKind } from '../../../database/schema';
import type { LeadStatus } from '../../../domain/lead-status';

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
  found: (n: number, more: boolean) => string;
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
}

function ruDuration(s: number): string {
  if (s < 60) return `${Math.round(s)} с`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} мин`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} ч ${m % 60} мин`;
  return `${Math.floor(h / 24)} д ${h % 24} ч`;
}

function enDuration(s: number): string {
  if (s < 60) return `${Math.round(s)} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** "1 заявка", "2 заявки", "5 заявок". */
function ruLeads(n: number): string {
  const tens = n % 100;
  const ones = n % 10;
  const word = tens >= 11 && tens <= 14 ? 'заявок' : ones === 1 ? 'заявка' : ones >= 2 && ones <= 4 ? 'заявки' : 'заявок';
  return `${n} ${word}`;
}

/** The lead's own fields, as the card labels them. */
export type CardField = 'name' | 'telegram' | 'phone' | 'date' | 'guests' | 'comment';

/** A locale's own texts: all but the card's words (`CardWords`). */
type PageTexts = Omit<Texts, 'statusLabel' | 'statusButton' | 'fields'> & { fields: Omit<Texts['fields'], CardField> };

const ru: PageTexts = {
  lang: 'ru',
  title: 'Заявки',
  tabList: 'Заявки',
  tabCharts: 'Графики',
  nav: 'Разделы',
  loading: 'Загрузка…',
  retry: 'Повторить',
  noLaunch: 'Откройте эту страницу из Telegram: кнопкой бота или ссылкой из группы заявок.',
  noLaunchSandbox:
    'Разработка: сервер работает с локальной песочницей Telegram. Откройте её страницу и нажмите «открыть инбокс как …» — ссылка запустит инбокс с подписанными данными запуска.',
  sandboxLink: 'Страница песочницы',
  unauthorized: {
    missing: 'Нет данных запуска: откройте страницу из Telegram.',
    invalid: 'Данные запуска не прошли проверку: откройте страницу из Telegram заново.',
    expired: 'Данные запуска устарели: закройте и откройте страницу в Telegram заново.',
  },
  forbidden: 'У вас нет доступа к заявкам: страница открыта не участником группы заявок.',
  unavailable: 'Заявки недоступны: у сервера нет токена бота.',
  membershipUnknown: 'Telegram сейчас не ответил, состоите ли вы в группе заявок. Повторите через минуту.',
  failed: 'Не удалось загрузить. Проверьте связь и повторите.',
  filters: (active) => (active ? `Фильтры (${active})` : 'Фильтры'),
  search: 'Поиск',
  searchHint: 'Номер, имя, телефон или ник',
  status: 'Статус',
  anyStatus: 'Все статусы',
  source: 'Источник',
  anySource: 'Все источники',
  noSource: 'Без источника',
  period: 'Период',
  since: 'С даты',
  until: 'По дату',
  reset: 'Сбросить',
  csv: 'Скачать CSV',
  csvFailed: 'Не удалось скачать CSV.',
  more: 'Показать ещё',
  empty: 'Заявок нет.',
  found: (n, more) => (more ? `Показано: ${ruLeads(n)}, есть ещё` : `Показано: ${ruLeads(n)}`),
  lead: (n) => `Заявка №${n}`,
  back: 'К списку',
  fields: {
    created: 'Создана',
    received: 'Получена',
    published: 'Опубликована',
  },
  hiddenPii: 'скрыто',
  anonymised: (at) => `Персональные данные удалены ${at}.`,
  sourceTitle: 'Источник',
  sourceFields: {
    landing: 'Лендинг',
    utm_source: 'utm_source',
    utm_medium: 'utm_medium',
    utm_campaign: 'utm_campaign',
    utm_content: 'utm_content',
    utm_term: 'utm_term',
    referrer: 'Откуда пришёл',
  },
  consent: 'Согласие',
  consentAccepted: (at) => `Дано ${at}`,
  consentNone: 'Нет сведений',
  policy: 'Политика',
  repeats: 'Повторы',
  noRepeats: 'Повторов нет.',
  repeatAt: (at) => `🔁 Повторное обращение: ${at}`,
  repeatSame: 'Те же данные',
  repeatHidden: 'Изменились данные (скрыты)',
  repeatByUsername: '⚠️ другой телефон — совпал только ник в Telegram',
  repeatByPhone: '⚠️ другой Telegram — совпал только телефон',
  history: 'История статусов',
  noHistory: 'Статус не менялся.',
  historyLine: (status, by) => (by ? `${status} — ${by}` : status),
  events: 'События',
  noEvents: 'Событий нет.',
  eventKinds: {
    published: 'Карточка опубликована в группе',
    published_plain: 'Карточка опубликована простым текстом (Telegram не принял оформление)',
    published_minimal: 'Опубликована краткая карточка: полная не поместилась',
    publish_failed: 'Карточку не удалось опубликовать, будет новая попытка',
    publish_deferred: 'Публикация отложена: Telegram попросил подождать',
    card_rewritten: 'Карточка обновлена',
    card_rewrite_failed: 'Карточку не удалось обновить, будет новая попытка',
    card_gone: 'Карточку удалили из группы: она будет опубликована заново',
    repeat_notified: 'Группе сообщено о повторном обращении',
    repeat_notify_failed: 'О повторном обращении не удалось сообщить, будет новая попытка',
    repeat_gave_up: 'О повторном обращении так и не удалось сообщить',
    repeat_skipped: 'О повторном обращении не сообщалось отдельно',
    reminded: 'Напоминание в группе: заявка ждёт ответа',
    anonymised: 'Персональные данные удалены',
    received_late: 'Пришла с опозданием, из резервной очереди лендинга',
    fallback_adopted: 'Сообщение резервного канала стало карточкой',
    fallback_not_adopted: 'Карточка опубликована новым сообщением вместо сообщения резервного канала',
    fallback_answered: 'На сообщение резервного канала дан ответ «Заявка в базе»',
    fallback_answer_failed: 'На сообщение резервного канала не удалось ответить, будет новая попытка',
    fallback_left: 'Сообщение резервного канала оставлено без ответа',
    webhook_sent: 'Вебхук доставлен',
    webhook_failed: 'Вебхук не доставлен, будет новая попытка',
    webhook_replayed: 'Вебхук отправлен заново',
  },
  eventOther: 'Служебное событие',
  cardLink: 'Открыть карточку в группе',
  noCard: 'Карточка ещё не опубликована.',
  actions: 'Сменить статус',
  confirmStatus: (n, to) => `Заявка №${n}: «${to}»?`,
  statusChanged: (to) => `Статус изменён: ${to}. Карточка в группе обновится.`,
  conflict: (current) => `Статус уже изменил кто-то другой: сейчас «${current}». Проверьте и повторите.`,
  erase: 'Удалить персональные данные',
  confirmErase: (n) => `Удалить персональные данные заявки №${n}? Это нельзя отменить.`,
  erased: 'Персональные данные удалены.',
  confirm: 'Подтвердить',
  cancel: 'Отмена',
  notFound: 'Такой заявки нет.',
  chartsTitle: 'Графики',
  perDay: 'Заявки по дням за 30 дней, по источникам',
  funnel: 'Воронка статусов',
  median: 'Медиана времени от новой заявки до первой смены статуса',
  medianNone: 'пока нет смен статуса',
  duration: ruDuration,
  legend: 'Источники',
};

const en: PageTexts = {
  lang: 'en',
  title: 'Leads',
  tabList: 'Leads',
  tabCharts: 'Charts',
  nav: 'Sections',
  loading: 'Loading…',
  retry: 'Retry',
  noLaunch: 'Open this page from Telegram: with the bot’s button or a link from the leads group.',
  noLaunchSandbox:
    'Development: the server talks to the local Telegram sandbox. Open its page and press “open the inbox as …”: the link launches the inbox with signed launch data.',
  sandboxLink: 'The sandbox page',
  unauthorized: {
    missing: 'No launch data: open the page from Telegram.',
    invalid: 'The launch data did not check out: open the page from Telegram again.',
    expired: 'The launch data is too old: close the page and open it in Telegram again.',
  },
  forbidden: 'You have no access to the leads: the page was not opened by a member of the leads group.',
  unavailable: 'The inbox is unavailable: the server has no bot token.',
  membershipUnknown: 'Telegram did not say just now whether you are a member of the leads group. Retry in a minute.',
  failed: 'Could not load. Check the connection and retry.',
  filters: (active) => (active ? `Filters (${active})` : 'Filters'),
  search: 'Search',
  searchHint: 'Number, name, phone or username',
  status: 'Status',
  anyStatus: 'Any status',
  source: 'Source',
  anySource: 'Any source',
  noSource: 'No source',
  period: 'Period',
  since: 'From',
  until: 'To',
  reset: 'Reset',
  csv: 'Download CSV',
  csvFailed: 'Could not download the CSV.',
  more: 'Show more',
  empty: 'No leads.',
  found: (n, more) => `Shown: ${n} lead${n === 1 ? '' : 's'}${more ? ', more available' : ''}`,
  lead: (n) => `Lead #${n}`,
  back: 'Back to the list',
  fields: {
    created: 'Created',
    received: 'Received',
    published: 'Published',
  },
  hiddenPii: 'hidden',
  anonymised: (at) => `Personal data erased ${at}.`,
  sourceTitle: 'Source',
  sourceFields: {
    landing: 'Landing',
    utm_source: 'utm_source',
    utm_medium: 'utm_medium',
    utm_campaign: 'utm_campaign',
    utm_content: 'utm_content',
    utm_term: 'utm_term',
    referrer: 'Referrer',
  },
  consent: 'Consent',
  consentAccepted: (at) => `Given ${at}`,
  consentNone: 'Not recorded',
  policy: 'Policy',
  repeats: 'Repeats',
  noRepeats: 'No repeats.',
  repeatAt: (at) => `🔁 Repeat request: ${at}`,
  repeatSame: 'Same data',
  repeatHidden: 'Data changed (hidden)',
  repeatByUsername: '⚠️ another phone — only the Telegram username matched',
  repeatByPhone: '⚠️ another Telegram — only the phone matched',
  history: 'Status history',
  noHistory: 'The status never changed.',
  historyLine: (status, by) => (by ? `${status} — ${by}` : status),
  events: 'Events',
  noEvents: 'No events.',
  eventKinds: {
    published: 'Card published in the group',
    published_plain: 'Card published as plain text (Telegram refused the formatting)',
    published_minimal: 'A short card published: the full one did not fit',
    publish_failed: 'The card could not be published; it will be tried again',
    publish_deferred: 'Publishing put off: Telegram asked to wait',
    card_rewritten: 'Card updated',
    card_rewrite_failed: 'The card could not be updated; it will be tried again',
    card_gone: 'The card was deleted from the group; it will be published again',
    repeat_notified: 'The group was told about a repeat request',
    repeat_notify_failed: 'The group could not be told about a repeat request; it will be tried again',
    repeat_gave_up: 'The group was never told about a repeat request',
    repeat_skipped: 'No separate message about a repeat request',
    reminded: 'Reminder in the group: the lead is waiting for an answer',
    anonymised: 'Personal data erased',
    received_late: "Arrived late, from the landing's fallback queue",
    fallback_adopted: 'The fallback message became the card',
    fallback_not_adopted: 'The card was published as a new message instead of the fallback message',
    fallback_answered: 'The fallback message got the answer “Lead stored”',
    fallback_answer_failed: 'The fallback message could not be answered; it will be tried again',
    fallback_left: 'The fallback message was left without an answer',
    webhook_sent: 'Webhook delivered',
    webhook_failed: 'Webhook not delivered; it will be tried again',
    webhook_replayed: 'Webhook sent again',
  },
  eventOther: 'Internal event',
  cardLink: 'Open the card in the group',
  noCard: 'The card is not published yet.',
  actions: 'Change the status',
  confirmStatus: (n, to) => `Lead #${n}: “${to}”?`,
  statusChanged: (to) => `Status changed: ${to}. The card in the group will follow.`,
  conflict: (current) => `Someone else changed the status: it is “${current}” now. Check and retry.`,
  erase: 'Erase personal data',
  confirmErase: (n) => `Erase the personal data of lead #${n}? This cannot be undone.`,
  erased: 'Personal data erased.',
  confirm: 'Confirm',
  cancel: 'Cancel',
  notFound: 'No such lead.',
  chartsTitle: 'Charts',
  perDay: 'Leads per day, last 30 days, by source',
  funnel: 'Status funnel',
  median: 'Median time from a new lead to its first status change',
  medianNone: 'no status change yet',
  duration: enDuration,
  legend: 'Sources',
};

const CATALOGUE: Record<string, PageTexts> = { ru, en };

/** The texts for `locale` (`ru`, `en`, or a tag such as `en-GB`); Russian for anything else. */
/**
 * The status names, the card buttons' words and the card's field labels, as the server's catalogue (LEADS_LOCALE) says
 * them: `GET /inbox/api/me` gives them, so the page and the cards in the group never word them two ways.
 */
export interface CardWords {
  statuses: Record<LeadStatus, string>;
  buttons: Partial<Record<LeadStatus, Partial<Record<LeadStatus, string>>>>;
  fields: Record<CardField, string>;
}

/** The page's texts in `locale` (Russian unless it is English), with the server's card words once they are known. */
export function textsFor(locale: string | null | undefined, words?: CardWords): Texts {
  const lang = (locale ?? 'ru').toLowerCase().split(/[-_]/)[0];
  const base = CATALOGUE[lang] ?? ru;
  const statusLabel = words?.statuses ?? ({ new: 'new', in_progress: 'in_progress', won: 'won', lost: 'lost', spam: 'spam' } as const);
  const fields = words?.fields ?? {
    name: 'name',
    telegram: 'telegram',
    phone: 'phone',
    date: 'date',
    guests: 'guests',
    comment: 'comment',
  };
  return {
    ...base,
    fields: { ...fields, ...base.fields },
    statusLabel,
    statusButton: (from, to) => words?.buttons[from]?.[to] ?? statusLabel[to],
  };
}
