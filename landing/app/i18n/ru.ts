import type { OptionalLeadField } from '@stickers/shared';

/**
 * Every text the visitor sees on the page, and the fallback message the group sees, in Russian: the default locale
 * and the shape of every other locale's catalogue (`LandingMessages`; en.ts `satisfies` it, so a missing text or a
 * function with other parameters fails the typecheck). The field error texts are shared/src/i18n/'s.
 */
export const ru = {
  meta: {
    title: 'Стикеры с вашими героями — Stickers',
    description: 'Нарисуем набор стикеров для Telegram по вашим фото: свадьба, команда, питомец, праздник.',
  },
  hero: {
    eyebrow: 'Stickers · стикерпаки на заказ',
    title: 'Стикеры с вашими героями — за три дня',
    lead:
      'Пришлите несколько фото — нарисуем набор стикеров для Telegram в едином стиле: свадьба, команда, питомец или праздник. ' +
      'Первые эскизы покажем бесплатно.',
    /** Each point: the bold part, then the rest. */
    points: [
      ['от 12 стикеров', ' в наборе'],
      ['3 дня', ' до готового пака'],
      ['правки', ' до результата'],
    ] as [string, string][],
  },
  form: {
    title: 'Оставить заявку',
    labels: {
      name: 'Имя',
      telegram: 'Ник в Telegram',
      phone: 'Телефон',
      date: 'Дата события',
      guests: 'Сколько гостей или героев',
      comment: 'Что хотите получить',
    },
    telegramHint: '@name или ссылка t.me/name',
    optional: 'необязательно',
    /** The honeypot's label (hidden from people). */
    trap: 'Компания',
    submit: 'Отправить заявку',
    submitting: 'Отправляем…',
    /** Under the captcha's place, without JavaScript. */
    /** After the error's text, before the studio's username (LANDING_TELEGRAM_CONTACT, a link); not shown without it. */
    contactUs: 'Или напишите нам в Telegram: ',
    captchaNoScript: 'Проверка «я не робот» работает только с включённым JavaScript — без него заявку отправить не получится.',
    consent: 'Нажимая кнопку, вы соглашаетесь на обработку контактов для ответа на заявку.',
    states: {
      throttled: 'Слишком много заявок подряд. Попробуйте через несколько минут — всё введённое сохранено.',
      error: 'Не получилось отправить заявку. Попробуйте ещё раз — всё введённое сохранено.',
      invalid: 'Проверьте поля, отмеченные ниже.',
      expired: 'Форма долго была открыта — проверьте данные и нажмите «Отправить заявку» ещё раз.',
      captcha: 'Пройдите проверку ещё раз — всё введённое сохранено.',
    },
  },
  sent: {
    numbered: (lead: number) => `Заявка #${lead} отправлена!`,
    plain: 'Заявка отправлена!',
    next: 'Мы напишем вам в Telegram в течение рабочего дня.',
    telegram: 'Получить ответ в Telegram',
    again: 'Отправить ещё одну заявку',
  },
  /** A page that is not there (404), or one that failed: what happened and the way back to the form. */
  missing: {
    notFound: 'Такой страницы нет.',
    /** The page's <title>s. */
    notFoundTitle: 'Страница не найдена — Stickers',
    failedTitle: 'Страница не открылась — Stickers',
    failed: 'Страница не открылась. Попробуйте ещё раз чуть позже.',
    back: 'Оставить заявку',
  },
  /** The request as a Telegram message (fallback or direct route, docs/requirements.md §8.4). */
  message: {
    /** The fallback's first line. */
    fallbackWarning: (requestId: string) => `⚠️ Запасной канал: сервер заявок не ответил — заявки нет в базе (request_id ${requestId})`,
    /** The fallback's second line: why the server did not take it (the landing's reason: network, timeout, 429 secret…). */
    fallbackReason: (reason: string) =>
      `Причина: ${
        {
          network: 'сервер недоступен',
          timeout: 'сервер не ответил за 5 с',
          '401': 'сервер не принял секрет лендинга (LEADS_SECRET не тот, что у сервера)',
          '404': 'сервер ответил 404 (проверьте LEADS_ENDPOINT)',
          '429 secret': 'сервер заблокировал адрес лендинга после неверных секретов',
          '429 flood': 'слишком много запросов с адреса лендинга',
          '503': 'сервер не может сохранить заявку (503)',
        }[reason] ?? `сервер ответил ${reason}`
      }`,
    title: 'Заявка с сайта',
    titleWithId: (requestId: string) => `Заявка с сайта (request_id ${requestId})`,
    name: 'Имя',
    phone: 'Телефон',
    /** The label of each optional field's line, as the card names it. */
    optional: { date: 'Дата', guests: 'Гостей', comment: 'Комментарий' } satisfies Record<OptionalLeadField, string>,
    /** Under the heading when the landing's captcha could not be checked (the card says the same). */
    captchaUnchecked: '⚠️ Капча не проверена: сервис проверки был недоступен',
    /** The consent's line (its time, ISO 8601 UTC, as sent to the server), as the card words it. */
    consent: (time: string) => `☑️ Согласие на обработку данных: ${time}`,
  },
  /** The spool's alerts to the admin chat (docs/operations.md, "The server was down — what happened to the leads"). */
  spoolAlerts: {
    malformed: (requestId: string, reason: string, more: number, dir: string) =>
      `🚨 Лендинг: файл заявки в резервной очереди повреждён (request_id ${requestId}: ${reason})${more > 0 ? ` (и ещё ${more})` : ''}. ` +
      `Он отложен в ${dir} и не повторяется — разберите его вручную ` +
      '(docs/operations.md, «Сервер был недоступен — что стало с заявками»).',
    stale: (waiting: number, oldestWait: string, requestId: string, lastError: string | null) =>
      `⏳ Лендинг: заявки ждут в резервной очереди (spool) дольше часа — сервер заявок их не принимает. ` +
      `В очереди: ${waiting}, самая старая ждёт ${oldestWait} (request_id ${requestId}).${lastError ? ` Последняя ошибка: ${lastError}.` : ''} ` +
      'Повторы идут сами; что проверить — docs/operations.md, «Сервер был недоступен — что стало с заявками».',
    rejected: (codes: string, requestId: string, dir: string) =>
      `🚨 Лендинг: сервер отклонил заявку из резервной очереди (422: ${codes}), request_id ${requestId}. ` +
      `Она отложена в ${dir} и больше не повторяется — внесите её вручную ` +
      '(docs/operations.md, «Сервер был недоступен — что стало с заявками»).',
  },
};

export type LandingMessages = typeof ru;
