import type { PageTexts } from './texts';

function ruDuration(s: number): string {
  if (s < 60) return `${Math.round(s)} с`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} мин`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} ч ${m % 60} мин`;
  return `${Math.floor(h / 24)} д ${h % 24} ч`;
}

/** "1 заявка", "2 заявки", "5 заявок". */
function ruLeads(n: number): string {
  const tens = n % 100;
  const ones = n % 10;
  const word = tens >= 11 && tens <= 14 ? 'заявок' : ones === 1 ? 'заявка' : ones >= 2 && ones <= 4 ? 'заявки' : 'заявок';
  return `${n} ${word}`;
}

/** The page in Russian (the default). */
export const ru: PageTexts = {
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
