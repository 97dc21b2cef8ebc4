import type { LeadField } from '@stickers/shared';
import { EXPORT_DAYS_MAX, type BotCommand } from '../domain/bot-commands';
import type { MessageMedia } from '../domain/lead-message';
import type { LeadStatus, TransitionFrom } from '../domain/lead-status';

const plural = new Intl.PluralRules('ru-RU');
const LEADS: Record<Intl.LDMLPluralRule, string> = {
  zero: 'заявок',
  one: 'заявка',
  two: 'заявки',
  few: 'заявки',
  many: 'заявок',
  other: 'заявки',
};
/** "1 заявка", "3 заявки", "5 заявок", "21 заявка": the number with the word in the form Russian gives it. */
const leadsCount = (n: number) => `${n} ${LEADS[plural.select(n)]}`;

/** Every text the leads group and the admin chat see, in Russian: the default locale, and the shape en.ts must have. */
export const ru = {
  intl: 'ru-RU',

  statuses: {
    new: '🆕 Новая',
    in_progress: '🛠 В работе',
    won: '✅ Заказ',
    lost: '❌ Отказ',
    spam: '🚫 Спам',
  } satisfies Record<LeadStatus, string>,

  /** The words on each button of a card in status `from`: one per change the domain allows (domain/lead-status.ts). */
  buttons: {
    new: { in_progress: 'В работу', spam: 'Спам' },
    in_progress: { won: 'Заказ', lost: 'Отказ', spam: 'Спам' },
    won: { in_progress: 'Вернуть в работу' },
    lost: { in_progress: 'Вернуть в работу' },
    spam: { new: 'Не спам' },
  } satisfies { [S in LeadStatus]: Record<TransitionFrom<S>, string> },

  card: {
    fields: {
      name: 'Имя',
      telegram: 'Telegram',
      phone: 'Телефон',
      date: 'Дата',
      guests: 'Гостей',
      comment: 'Комментарий',
    } satisfies Record<LeadField, string>,
    title: (lead: number) => `🆕 Заявка #${lead}`,
    status: (label: string) => `Статус: ${label}`,
    piiHidden: '🔒 Личные данные скрыты (LEADS_CARD_PII=0)',
    erased: '🗑 Личные данные удалены',
    viaFallback: (time: string) => `📨 Пришла через резервный канал в ${time}`,
    late: (time: string) => `⏳ Пришла с опозданием (сервер заявок не отвечал): в базе с ${time}`,
    repeat: (time: string) => `🔁 Повторное обращение: ${time}`,
    repeatHidden: 'Изменились данные (скрыты)',
    repeatSame: 'Те же данные',
    repeatByUsername: '⚠️ другой телефон — совпал только ник в Telegram',
    repeatByPhone: '⚠️ другой Telegram — совпал только телефон',
    moreRepeats: (count: number) => `…и ещё повторных: ${count}`,
    writeTo: (username: string) => `✈️ Написать ${username}`,
    minimalNote: 'текст слишком длинный — см. trace',
    captchaUnchecked: '⚠️ Капча не проверена: сервис проверки был недоступен',
    consent: (time: string) => `☑️ Согласие на обработку данных: ${time}`,
    telegramBound: (account: string) => `✅ Telegram подтверждён: ${account}`,
    telegramBoundHidden: '✅ Telegram подтверждён',
    telegramBlocked: '⛔ Посетитель заблокировал бота: ответы ему не доходят',
    telegramStopped: '🔕 Посетитель отписался (/stop): бот ему больше не пишет',
    telegramDiffers: (typed: string) => `⚠️ не совпадает с указанным в заявке (${typed})`,
  },

  conversation: {
    bound: (lead: number) => `Спасибо! Это ваша заявка #${lead}. Менеджер получил её и напишет вам сюда, в этот чат.`,
    invalid:
      'Эта ссылка не работает: она устарела или уже была использована. Если вы оставляли заявку, менеджер всё равно с вами свяжется; ' +
      'при необходимости отправьте форму на сайте ещё раз.',
    hello: 'Здравствуйте! Чтобы связать этот чат с заявкой, откройте ссылку «Получить ответ в Telegram» со страницы после отправки формы.',
    unbound: (landing: string | null) =>
      `Этот чат пока не связан ни с одной заявкой, поэтому сообщение не передано менеджеру. Оставьте заявку на сайте${landing ? `: ${landing}` : ''} ` +
      'и откройте ссылку «Получить ответ в Telegram» со страницы после отправки формы.',
    stopped: (leads: string) =>
      `Хорошо, больше не будем писать вам здесь по ${/,/.test(leads) ? 'заявкам' : 'заявке'} ${leads}. Передумаете — отправьте /start.`,
    stoppedUnbound:
      'Вы отписались командой /stop, поэтому сообщение не передано менеджеру. Чтобы снова писать ему здесь, отправьте /start.',
    /** The link tapped again, or `/start` typed, by someone bound already: which lead the chat is about, not the first thanks. */
    boundAgain: (lead: number) => `Вы на связи по заявке #${lead}: пишите сюда, менеджер ответит здесь же.`,
    resumed: (leads: string) =>
      `Снова на связи по ${/,/.test(leads) ? 'заявкам' : 'заявке'} ${leads}: пишите сюда, менеджер ответит здесь же.`,
    several: (lead: number) =>
      `Вы оставили несколько заявок: сообщения из этого чата идут по заявке #${lead}. Чтобы писать по другой, нажмите её кнопку.`,
    writeAbout: (lead: number) => `✍️ Писать по заявке #${lead}`,
    chosen: (lead: number) => `Теперь сообщения идут по заявке #${lead}.`,
    notChosen: 'По этой заявке здесь больше нельзя писать.',
    help:
      '🤖 Это ваш чат с менеджером по заявке: пишите сюда, ответ придёт сюда же.\n' +
      '/start — по какой заявке идут сообщения\n/stop — больше не писать вам здесь',
    failed: '⚠️ Бот не смог сохранить это сообщение: сервер заявок сейчас не отвечает. Отправьте его ещё раз через минуту.',
  },

  /** Answers to a button's press: Telegram shows at most 200 characters. */
  press: {
    foreignChat: 'Кнопки карточек работают только в группе заявок.',
    notManager: 'Менять статус заявки могут только менеджеры.',
    malformed: 'Неизвестная кнопка.',
    unknownLead: 'Заявка не найдена.',
    staleCard: 'Эта карточка устарела: её кнопки больше не меняют статус.',
    anonymised: 'Заявка обезличена: статус больше не меняется.',
    /** Appended when the card could not be rewritten yet (the outbox keeps trying). */
    cardLater: 'Карточка обновится чуть позже.',
    alreadyChanged: (status: string) => `Статус уже изменён: ${status}`,
    done: (status: string) => `Готово: ${status}`,
    failed: 'Не получилось: сервер заявок не смог сохранить нажатие. Нажмите ещё раз через минуту.',
    noName: 'без имени',
  },

  commands: {
    menu: {
      stickers_new: 'Заявки без карточки и всё ещё новые',
      stickers_stats: 'Статистика заявок за 7 и 30 дней',
      stickers_forget: 'Обезличить: /stickers_forget 42, @ник, +7… или 8 9… (все заявки человека)',
      stickers_export: 'CSV заявок в чат админов: /stickers_export 30 (дней)',
      stickers_chatid: 'ID этого чата и темы для настройки (LEADS_CHAT_ID, LEADS_THREAD_ID)',
      stickers_inbox: 'Инбокс заявок: список, поиск, графики (Mini App)',
    } satisfies Record<BotCommand, string>,
    helpTitle: '🤖 Команды бота:',
    failed: '⚠️ Команда не выполнена: сервер заявок не смог прочитать или записать базу. Повторите её через минуту.',
    wrongChat: 'Команды работают только в группе заявок и в чате админов.',
    notManager: 'Обезличивать заявки могут только менеджеры.',
    notAdmin: 'Обезличивать заявки могут только администраторы группы заявок.',
    adminUnknown: 'Не удалось проверить в Telegram, администратор ли вы группы заявок. Попробуйте позже.',
    anonymousAdmin:
      'Бот не знает, кто вы: вы пишете как анонимный администратор. Отключите «Анонимность» в своих правах администратора и повторите.',
    forgetUsage:
      'Укажите, кого обезличить: номер заявки (/stickers_forget 42), телефон (/stickers_forget +7 916 555-12-34) или ник (/stickers_forget @anna_k).',
    exportWrongChat: 'Выгрузка приходит только в чат админов.',
    exportNotManager: 'Выгружать заявки могут только менеджеры.',
    exportNotAdmin: 'Выгружать заявки могут только администраторы группы заявок.',
    exportUsage: `Укажите число дней от 1 до ${EXPORT_DAYS_MAX}: /stickers_export 30`,
    exportFailed: 'Не удалось отправить файл выгрузки. Попробуйте позже.',
    chatIdPrivate: 'Это личный чат с ботом. Добавьте бота в группу заявок и отправьте /stickers_chatid там (в нужной теме).',
    chatIdLeads: 'Для .env (группа заявок):',
    chatIdAdmin: 'Для чата админов — то же под именами:',
    exportCaption: (days: number, rows: number) => `Заявки за ${days} дн.: ${rows}`,
    exported: (days: number, rows: number) => `📎 Выгрузка за ${days} дн.: ${leadsCount(rows)} (файл выше).`,
    forgetNoContact: 'Заявок с таким контактом не найдено: никто не обезличен.',
    forgetContact: (ids: string) => `🗑 Обезличено заявок: ${ids}: личные данные удалены, карточки обновлены.`,
    forgetDone: (lead: number) => `🗑 Заявка #${lead} обезличена: личные данные удалены, карточка обновлена.`,
    forgetAlready: (lead: number) => `Заявка #${lead} уже обезличена.`,
    forgetUnknown: (lead: number) => `Заявки #${lead} нет.`,
    forgetUnknownPhone: (lead: number) =>
      `Заявки #${lead} нет. Если это телефон, напишите его с плюсом или пробелами: /stickers_forget +7 916 555-12-34.`,
  },

  inbox: {
    button: '📥 Открыть инбокс',
    menuButton: 'Инбокс',
    private: '📥 Инбокс заявок: список, поиск, статусы и графики.',
    group:
      '📥 Инбокс заявок: список, поиск, статусы и графики. Он открывается в личном чате с ботом: кнопка ниже ведёт туда, и у поля ввода появится кнопка «Инбокс».',
    notConfigured: 'Инбокс не настроен: задайте LEADS_INBOX_URL.',
  },

  charts: {
    perDayTitle: (days: number) => `Заявки по дням за ${days} дней`,
    funnelTitle: (days: number) => `Заявки за ${days} дней по статусу сейчас`,
    ofSource: (source: string) => `источник ${source}`,
    noSource: 'без источника',
    total: (n: number) => `всего ${n}`,
    busiest: (n: number, day: string) => `больше всего ${n} — ${day}`,
    otherSources: (count: number) => `другие (${count})`,
    digestCaption: (days: number) => `📈 Заявки по дням за ${days} дней`,
  },

  group: {
    repeatPing: (lead: number) => `🔁 Повторное обращение по заявке #${lead}`,
    reminder: (lead: number, minutes: number) => `⏰ Заявка #${lead} ждёт ответа больше ${minutes} мин. Возьмите её в работу.`,
    /** The reply on a late lead's fallback message that did not become its card. */
    fallbackAnswer: (lead: number) => `✅ Заявка в базе: #${lead}`,
    fallbackAnswerRepeat: (lead: number) => `✅ Заявка в базе: повтор заявки #${lead}`,
    /** The header of a visitor's message relayed into the group (personal: the visitor's name). */
    visitorHeader: (lead: number, name: string) => `💬 ${name} · заявка #${lead}`,
    visitorNotice: (lead: number) => `💬 Новое сообщение по заявке #${lead}`,
    /** A visitor's media by name: in the group where it cannot be copied with its caption (a sticker, a location), and in the inbox. */
    media: {
      photo: '📷 фото',
      document: '📎 файл',
      voice: '🎤 голосовое',
      video: '🎬 видео',
      sticker: '🙂 стикер',
      other: '📎 вложение',
    } satisfies Record<MessageMedia, string>,
    cut: '… ✂️ (обрезано: сообщение целиком — в инбоксе)',
    notDelivered: (why: string) => `⚠️ Не доставлено посетителю: ${why}`,
    /** The same for a message written in the inbox (under the card: it names the message, which the group never saw). */
    notDeliveredFromInbox: (why: string, author: string, text: string) =>
      `⚠️ Не доставлено посетителю: ${why}\n📤 Сообщение из инбокса · ${author}\n${text}`,
    /** Under the card once a message written in the inbox reached the visitor: the group sees the answer too. */
    inboxAnswer: (lead: number, author: string, text: string) => `📤 Ответ из инбокса · заявка #${lead} · ${author}\n${text}`,
    why: {
      blocked: 'он заблокировал бота',
      stopped: 'он отписался командой /stop',
      notBound: 'он ещё не открыл бота по ссылке «Получить ответ в Telegram»',
      refused: (description: string) => `Telegram отказал (${description})`,
      gaveUp: (description: string) => `Telegram не ответил после нескольких попыток (${description})`,
    },
  },

  reports: {
    allPublished: '✅ Все заявки опубликованы.',
    unpublished: (count: number) => `📭 Без карточки: ${count}`,
    unpublishedLine: (lead: number, time: string, attempts: number, error: string, next: string) =>
      `#${lead} · ${time} · попыток ${attempts} · ${error} · следующая попытка ${next}`,
    lastError: (error: string) => `ошибка: ${error}`,
    notSentYet: 'ещё не отправлялась',
    more: (count: number) => `…и ещё ${count}`,
    noneNew: '✅ Новых необработанных заявок нет.',
    stillNew: (count: number) => `🆕 В статусе «Новая»: ${count}`,
    stillNewLine: (lead: number, time: string, waiting: string) => `#${lead} · ${time} · ждёт ${waiting}`,
    withoutCard: ' · без карточки',
    minutes: (min: number) => `${min} мин`,
    hours: (h: number, min: number) => `${h} ч ${min} мин`,
    days: (d: number) => `${d} дн`,
    statsTitle: '📊 Заявки',
    statsPeriod: (days: number, total: number) => `За ${days} дней: ${total}`,
    repeats: (count: number) => `🔁 Повторных обращений: ${count}`,
    unpublishedNow: (count: number) => `📭 Без карточки сейчас: ${count}`,
    digestTitle: (total: number) => `🗓 Сводка за сутки: заявок ${total}`,
    digestStillNew: (count: number) => `🕒 Всё ещё «Новая»: ${count}`,
    sourcesTitle: '📣 По источникам (лендинг · источник / кампания):',
    otherSources: (count: number) => `…другие источники: ${count}`,
    noSource: (count: number) => `без источника: ${count}`,
    landingsTitle: '📣 По лендингам:',
    noLanding: (count: number) => `без лендинга: ${count}`,
  },

  alerts: {
    publishFailing: (lead: number, attempts: number, error: string) =>
      `🚨 Карточки не публикуются: заявка #${lead}, попыток: ${attempts}, последняя ошибка: ${error}. Список: /stickers_new`,
    plainCard: (lead: number, refused: string) =>
      `⚠️ Карточка заявки #${lead} отправлена простым текстом: Telegram не принял HTML (${refused}).`,
    minimalCard: (lead: number, refused: string) =>
      `⚠️ Карточка заявки #${lead} слишком длинная для Telegram (${refused}): в группе краткая карточка — номер, статус, кнопки. ` +
      `Данные заявки: trace #${lead}.`,
    webhookFailing: (endpoint: string, type: string, lead: number, attempts: number, error: string) =>
      `🚨 Вебхук не доставляется больше 30 мин: ${endpoint}, событие ${type} заявки #${lead}, попыток: ${attempts}, ` +
      `последняя ошибка: ${error}. История: trace #${lead}.`,
    adminTopicGone: (threadId: number, description: string) =>
      `⚠️ Тема ADMIN_THREAD_ID=${threadId} закрыта или удалена (${description}): сообщение в общей теме чата.`,
    /** The variables to update after a migration, joined: `LEADS_CHAT_ID и LEADS_ROUTES (…)`. */
    and: ' и ',
    chatMigrated: (from: string, to: string, variables: string) =>
      `ℹ️ Группа заявок стала супергруппой: новый id ${to} (был ${from}). Карточки идут туда; обновите ${variables}.`,
    otherChatMigrated: (from: string, to: string) => `ℹ️ Чат ${from} стал супергруппой ${to}: карточки в нём переадресованы туда.`,
    adminChatMigrated: (from: string, to: string) =>
      `ℹ️ Чат оповещений стал супергруппой: новый id ${to} (был ${from}). Оповещения и сводка идут сюда; обновите ADMIN_CHAT_ID.`,
    topicGone: (threadId: number | null, chatId: string, description: string, what: string, variable: string | null) =>
      `⚠️ ${threadId !== null ? `Тема ${threadId}` : 'Тема карточки'} в чате ${chatId} закрыта или удалена (${description}): ` +
      `${what} — в общей теме чата (General). Откройте тему снова${variable ? ` или поправьте ${variable}` : ''}.`,
    /** What went into the General topic, for `topicGone`. */
    topicCard: (lead: number) => `карточка заявки #${lead}`,
    topicRepeat: (lead: number) => `повтор по заявке #${lead}`,
    topicReminder: (lead: number) => `напоминание по заявке #${lead}`,
    topicMessage: (lead: number) => `сообщение посетителя по заявке #${lead}`,
    landingClock: (seconds: number) =>
      `⏱ Часы лендинга спешат на ${seconds} с относительно сервера: время отложенных заявок взято по серверу. ` +
      'Проверьте синхронизацию времени (NTP) на машине лендинга.',
    lateHourlyLimit: (limit: number) =>
      `⚠️ Лимит отложенных заявок: больше ${limit} за час пришло из резервной очереди лендинга. ` +
      'Они получают 429 и будут повторены позже (LEADS_LATE_HOURLY_LIMIT).',
    hourlyLimit: (limit: number) => `⚠️ Лимит заявок: больше ${limit} за час. Новые заявки получают 429, пока окно не освободится.`,
    secretLockout: (failures: number, windowMin: number, caller: string, minutes: number) =>
      `🔒 ${failures} неверных секретов за ${windowMin} минут ` +
      `от одного адреса (${caller}): POST /leads с него отклоняется (429), даже с верным секретом, ещё ~${minutes} мин. ` +
      'Если это сервер лендинга — заявки сейчас уходят в запасной канал; ' +
      'проверьте, что LEADS_SECRET совпадает на обеих сторонах.',
  },

  /** What `npm run leads -- setup` posts to check the chats: a message in the admin chat, a card with a button. */
  setup: {
    adminTest: '🧪 Stickers Leads: проверка чата админов. Сюда придут оповещения и ежедневная сводка.',
    card: '🧪 Проверочная карточка Stickers Leads\nНажмите кнопку: так setup проверит, что нажатия доходят до бота.',
    button: '✅ Проверить кнопку',
    notPressed: '🧪 Проверочная карточка Stickers Leads: кнопку не нажали. Её можно удалить.',
    pressAnswer: '✅ Кнопка работает: нажатие дошло до бота',
    pressed: (who: string) => `✅ Проверочная карточка Stickers Leads: нажатие (${who}) дошло до бота. Её можно удалить.`,
  },
};

export type Messages = typeof ru;
