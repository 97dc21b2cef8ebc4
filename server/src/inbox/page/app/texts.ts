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
  unauthorized: Record<'missing' | 'invalid' | 'expired', string>;
  forbidden: string;
  unavailable: string;
  failed: string;
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
  history: string;
  noHistory: string;
  historyLine: (status: string, by: string | null) => string;
  events: string;
  noEvents: string;
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
type CardField = 'name' | 'telegram' | 'phone' | 'date' | 'guests' | 'comment';

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
  unauthorized: {
    missing: 'Нет данных запуска: откройте страницу из Telegram.',
    invalid: 'Данные запуска не прошли проверку: откройте страницу из Telegram заново.',
    expired: 'Данные запуска устарели: закройте и откройте страницу в Telegram заново.',
  },
  forbidden: 'У вас нет доступа к заявкам: страница открыта не участником группы заявок.',
  unavailable: 'Заявки недоступны: у сервера нет токена бота.',
  failed: 'Не удалось загрузить. Проверьте связь и повторите.',
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
  history: 'История статусов',
  noHistory: 'Статус не менялся.',
  historyLine: (status, by) => (by ? `${status} — ${by}` : status),
  events: 'События',
  noEvents: 'Событий нет.',
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
  unauthorized: {
    missing: 'No launch data: open the page from Telegram.',
    invalid: 'The launch data did not check out: open the page from Telegram again.',
    expired: 'The launch data is too old: close the page and open it in Telegram again.',
  },
  forbidden: 'You have no access to the leads: the page was not opened by a member of the leads group.',
  unavailable: 'The inbox is unavailable: the server has no bot token.',
  failed: 'Could not load. Check the connection and retry.',
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
  history: 'Status history',
  noHistory: 'The status never changed.',
  historyLine: (status, by) => (by ? `${status} — ${by}` : status),
  events: 'Events',
  noEvents: 'No events.',
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
