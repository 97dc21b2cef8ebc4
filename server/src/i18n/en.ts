import { EXPORT_DAYS_MAX } from '../domain/bot-commands';
import type { Messages } from './ru';

/** Every text the leads group and the admin chat see, in English (LEADS_LOCALE=en); the shape is ru.ts's. */
export const en = {
  intl: 'en-US',

  statuses: { new: '🆕 New', in_progress: '🛠 In progress', won: '✅ Won', lost: '❌ Lost', spam: '🚫 Spam' },

  buttons: {
    new: { in_progress: 'Take it', spam: 'Spam' },
    in_progress: { won: 'Won', lost: 'Lost', spam: 'Spam' },
    won: { in_progress: 'Back to work' },
    lost: { in_progress: 'Back to work' },
    spam: { new: 'Not spam' },
  },

  card: {
    fields: { name: 'Name', telegram: 'Telegram', phone: 'Phone', date: 'Date', guests: 'Guests', comment: 'Comment' },
    title: (lead) => `🆕 Lead #${lead}`,
    status: (label) => `Status: ${label}`,
    piiHidden: '🔒 Personal data hidden (LEADS_CARD_PII=0)',
    erased: '🗑 Personal data erased',
    viaFallback: (time) => `📨 Came through the fallback channel at ${time}`,
    late: (time) => `⏳ Came late (the leads server did not answer): stored since ${time}`,
    repeat: (time) => `🔁 Repeat request: ${time}`,
    repeatHidden: 'Data changed (hidden)',
    repeatSame: 'Same data',
    repeatByUsername: '⚠️ another phone — only the Telegram username matched',
    repeatByPhone: '⚠️ another Telegram — only the phone matched',
    moreRepeats: (count) => `…and ${count} more ${count === 1 ? 'repeat' : 'repeats'}`,
    writeTo: (username) => `✈️ Message ${username}`,
    minimalNote: 'text too long — see trace',
    captchaUnchecked: '⚠️ Captcha not checked: the verification service was unavailable',
    consent: (time) => `☑️ Consent to data processing: ${time}`,
    telegramBound: (account) => `✅ Telegram confirmed: ${account}`,
    telegramBoundHidden: '✅ Telegram confirmed',
    telegramBlocked: '⛔ The visitor blocked the bot: replies do not reach them',
    telegramStopped: '🔕 The visitor unsubscribed (/stop): the bot no longer writes to them',
    telegramDiffers: (typed) => `⚠️ not the one typed in the form (${typed})`,
  },

  conversation: {
    bound: (lead) => `Thank you! This is your request #${lead}. A manager has it and will write to you here, in this chat.`,
    invalid:
      'This link does not work: it has expired or was used already. If you sent a request, a manager will contact you anyway; ' +
      'send the form on the site again if you need to.',
    hello:
      'Hello! To connect this chat with your request, open the “Get the answer in Telegram” link on the page shown after sending the form.',
    unbound: (landing) =>
      `This chat is not connected with any request yet, so your message was not passed on to a manager. Send a request on the site${landing ? `: ${landing}` : ''} ` +
      'and open the “Get the answer in Telegram” link on the page shown after sending the form.',
    stopped: (leads) =>
      `All right, we will not write to you here about ${/,/.test(leads) ? 'requests' : 'request'} ${leads} again. Changed your mind? Send /start.`,
    stoppedUnbound:
      'You unsubscribed with /stop, so your message was not passed on to a manager. To write to them here again, send /start.',
    boundAgain: (lead) => `You are in touch about request #${lead}: write here, and a manager answers here.`,
    resumed: (leads) => `Back in touch about ${/,/.test(leads) ? 'requests' : 'request'} ${leads}: write here, and a manager answers here.`,
    several: (lead) =>
      `You have sent several requests: messages in this chat go to request #${lead}. To write about another, press its button.`,
    writeAbout: (lead) => `✍️ Write about request #${lead}`,
    chosen: (lead) => `Your messages now go to request #${lead}.`,
    notChosen: 'You can no longer write about this request here.',
    help:
      '🤖 This is your chat with a manager about your request: write here, and the answer comes here.\n' +
      '/start — which request your messages go to\n/stop — no more messages here',
    failed: '⚠️ The bot could not save this message: the leads server is not answering just now. Send it again in a minute.',
  },

  press: {
    foreignChat: 'Card buttons work only in the leads group.',
    notManager: 'Only managers may change a lead’s status.',
    malformed: 'Unknown button.',
    unknownLead: 'Lead not found.',
    staleCard: 'This card is out of date: its buttons no longer change the status.',
    anonymised: 'The lead is anonymised: its status no longer changes.',
    cardLater: 'The card will update shortly.',
    alreadyChanged: (status) => `Status already changed: ${status}`,
    done: (status) => `Done: ${status}`,
    failed: 'Not done: the leads server could not save the press. Press again in a minute.',
    noName: 'no name',
  },

  commands: {
    menu: {
      stickers_new: 'Leads without a card and leads still new',
      stickers_stats: 'Lead statistics for 7 and 30 days',
      stickers_forget: 'Anonymise: /stickers_forget 42, @username, +7… or 8 9… (all of a person’s leads)',
      stickers_export: 'Leads as CSV in the admin chat: /stickers_export 30 (days)',
      stickers_chatid: 'This chat’s and topic’s ids for setup (LEADS_CHAT_ID, LEADS_THREAD_ID)',
      stickers_inbox: 'The leads inbox: list, search, charts (Mini App)',
    },
    helpTitle: '🤖 The bot’s commands:',
    failed: '⚠️ Command not carried out: the leads server could not read or write its database. Send it again in a minute.',
    wrongChat: 'Commands work only in the leads group and the admin chat.',
    notManager: 'Only managers may anonymise leads.',
    notAdmin: 'Only administrators of the leads group may anonymise leads.',
    adminUnknown: 'Could not check with Telegram whether you administer the leads group. Try again later.',
    anonymousAdmin:
      'The bot cannot tell who you are: you write as an anonymous administrator. Turn off "Remain anonymous" in your administrator rights and try again.',
    forgetUsage:
      'Say whom to anonymise: a lead number (/stickers_forget 42), a phone (/stickers_forget +7 916 555-12-34) or a username (/stickers_forget @anna_k).',
    exportWrongChat: 'The export comes only to the admin chat.',
    exportNotManager: 'Only managers may export leads.',
    exportNotAdmin: 'Only administrators of the leads group may export leads.',
    exportUsage: `Give a number of days from 1 to ${EXPORT_DAYS_MAX}: /stickers_export 30`,
    exportFailed: 'Could not send the export file. Try again later.',
    chatIdPrivate:
      'This is a private chat with the bot. Add the bot to the leads group and send /stickers_chatid there (in the right topic).',
    chatIdLeads: 'For .env (leads group):',
    chatIdAdmin: 'For the admin chat — the same under these names:',
    exportCaption: (days, rows) => `Leads for ${days} ${days === 1 ? 'day' : 'days'}: ${rows}`,
    exported: (days, rows) =>
      `📎 Export for ${days} ${days === 1 ? 'day' : 'days'}: ${rows} ${rows === 1 ? 'lead' : 'leads'} (file above).`,
    forgetNoContact: 'No leads with this contact: nobody anonymised.',
    forgetContact: (ids) => `🗑 Anonymised (personal data erased, cards updated): ${ids}.`,
    forgetDone: (lead) => `🗑 Lead #${lead} anonymised: personal data erased, card updated.`,
    forgetAlready: (lead) => `Lead #${lead} is already anonymised.`,
    forgetUnknown: (lead) => `There is no lead #${lead}.`,
    forgetUnknownPhone: (lead) =>
      `There is no lead #${lead}. If it is a phone, write it with a plus or spaces: /stickers_forget +7 916 555-12-34.`,
  },

  inbox: {
    button: '📥 Open the inbox',
    menuButton: 'Inbox',
    private: '📥 The leads inbox: list, search, statuses and charts.',
    group:
      '📥 The leads inbox: list, search, statuses and charts. It opens in the private chat with the bot: the button below leads there, and the “Inbox” button appears by the message field.',
    notConfigured: 'The inbox is not configured: set LEADS_INBOX_URL.',
  },

  charts: {
    perDayTitle: (days) => `Leads per day, last ${days} days`,
    funnelTitle: (days) => `Leads of the last ${days} days by their status now`,
    ofSource: (source) => `source ${source}`,
    noSource: 'no source',
    total: (n) => `${n} in all`,
    busiest: (n, day) => `most ${n} on ${day}`,
    otherSources: (count) => `others (${count})`,
    digestCaption: (days) => `📈 Leads per day, last ${days} days`,
  },

  group: {
    repeatPing: (lead) => `🔁 Repeat request for lead #${lead}`,
    reminder: (lead, minutes) => `⏰ Lead #${lead} has waited for an answer for over ${minutes} min. Please take it.`,
    fallbackAnswer: (lead) => `✅ Lead stored: #${lead}`,
    fallbackAnswerRepeat: (lead) => `✅ Lead stored: repeat of lead #${lead}`,
    visitorHeader: (lead, name) => `💬 ${name} · lead #${lead}`,
    visitorNotice: (lead) => `💬 New message on lead #${lead}`,
    media: {
      photo: '📷 photo',
      document: '📎 file',
      voice: '🎤 voice message',
      video: '🎬 video',
      sticker: '🙂 sticker',
      other: '📎 attachment',
    },
    cut: '… ✂️ (cut here: the whole message is in the inbox)',
    notDelivered: (why) => `⚠️ Not delivered to the visitor: ${why}`,
    notDeliveredFromInbox: (why, author, text) => `⚠️ Not delivered to the visitor: ${why}\n📤 Message from the inbox · ${author}\n${text}`,
    inboxAnswer: (lead, author, text) => `📤 Answer from the inbox · lead #${lead} · ${author}\n${text}`,
    why: {
      blocked: 'they blocked the bot',
      stopped: 'they unsubscribed with /stop',
      notBound: 'they have not opened the bot through the “Get the answer in Telegram” link yet',
      refused: (description) => `Telegram refused (${description})`,
      gaveUp: (description) => `Telegram did not answer after several attempts (${description})`,
    },
  },

  reports: {
    allPublished: '✅ Every lead is published.',
    unpublished: (count) => `📭 Without a card: ${count}`,
    unpublishedLine: (lead, time, attempts, error, next) => `#${lead} · ${time} · attempts ${attempts} · ${error} · next attempt ${next}`,
    lastError: (error) => `error: ${error}`,
    notSentYet: 'not sent yet',
    more: (count) => `…and ${count} more`,
    noneNew: '✅ No unhandled new leads.',
    stillNew: (count) => `🆕 Still “New”: ${count}`,
    stillNewLine: (lead, time, waiting) => `#${lead} · ${time} · waiting ${waiting}`,
    withoutCard: ' · no card',
    minutes: (min) => `${min} min`,
    hours: (h, min) => `${h} h ${min} min`,
    days: (d) => `${d} d`,
    statsTitle: '📊 Leads',
    statsPeriod: (days, total) => `Last ${days} days: ${total}`,
    repeats: (count) => `🔁 Repeat requests: ${count}`,
    unpublishedNow: (count) => `📭 Without a card now: ${count}`,
    digestTitle: (total) => `🗓 Daily digest: ${total} ${total === 1 ? 'lead' : 'leads'}`,
    digestStillNew: (count) => `🕒 Still “New”: ${count}`,
    sourcesTitle: '📣 By source (landing · source / campaign):',
    otherSources: (count) => `…other sources: ${count}`,
    noSource: (count) => `no source: ${count}`,
    landingsTitle: '📣 By landing:',
    noLanding: (count) => `no landing: ${count}`,
  },

  alerts: {
    publishFailing: (lead, attempts, error) =>
      `🚨 Cards are not being published: lead #${lead}, attempts: ${attempts}, last error: ${error}. List: /stickers_new`,
    plainCard: (lead, refused) => `⚠️ The card of lead #${lead} went out as plain text: Telegram refused the HTML (${refused}).`,
    minimalCard: (lead, refused) =>
      `⚠️ The card of lead #${lead} is too long for Telegram (${refused}): the group has a short card — number, status, buttons. ` +
      `The lead’s data: trace #${lead}.`,
    webhookFailing: (endpoint, type, lead, attempts, error) =>
      `🚨 A webhook has not been delivered for over 30 min: ${endpoint}, event ${type} of lead #${lead}, attempts: ${attempts}, ` +
      `last error: ${error}. History: trace #${lead}.`,
    adminTopicGone: (threadId, description) =>
      `⚠️ The topic ADMIN_THREAD_ID=${threadId} is closed or deleted (${description}): message in the chat’s General topic.`,
    and: ' and ',
    chatMigrated: (from, to, variables) =>
      `ℹ️ The leads group became a supergroup: new id ${to} (was ${from}). Cards go there; update ${variables}.`,
    otherChatMigrated: (from, to) => `ℹ️ Chat ${from} became supergroup ${to}: its cards are re-addressed there.`,
    adminChatMigrated: (from, to) =>
      `ℹ️ The admin chat became a supergroup: new id ${to} (was ${from}). Alerts and the digest come here; update ADMIN_CHAT_ID.`,
    topicGone: (threadId, chatId, description, what, variable) =>
      `⚠️ ${threadId !== null ? `Topic ${threadId}` : 'The card’s topic'} in chat ${chatId} is closed or deleted (${description}): ` +
      `${what} — in the chat’s General topic. Reopen the topic${variable ? ` or correct ${variable}` : ''}.`,
    topicCard: (lead) => `the card of lead #${lead}`,
    topicRepeat: (lead) => `a repeat of lead #${lead}`,
    topicReminder: (lead) => `a reminder for lead #${lead}`,
    topicMessage: (lead) => `a visitor's message about lead #${lead}`,
    landingClock: (seconds) =>
      `⏱ The landing’s clock is ${seconds} s ahead of the server’s: late leads take the server’s time. ` +
      'Check time synchronisation (NTP) on the landing’s machine.',
    lateHourlyLimit: (limit) =>
      `⚠️ Late leads limit: more than ${limit} an hour came from the landing’s spool. ` +
      'They get 429 and will be retried later (LEADS_LATE_HOURLY_LIMIT).',
    hourlyLimit: (limit) => `⚠️ Leads limit: more than ${limit} an hour. New leads get 429 until the window frees up.`,
    secretLockout: (failures, windowMin, caller, minutes) =>
      `🔒 ${failures} wrong secrets in ${windowMin} minutes ` +
      `from one address (${caller}): POST /leads from it is refused (429), even with the right secret, for ~${minutes} more min. ` +
      'If this is the landing’s server, leads now go to the fallback channel; ' +
      'check that LEADS_SECRET is the same on both sides.',
  },

  setup: {
    adminTest: '🧪 Stickers Leads: checking the admin chat. Alerts and the daily digest will come here.',
    card: '🧪 Stickers Leads test card\nPress the button: this is how setup checks that presses reach the bot.',
    button: '✅ Check the button',
    notPressed: '🧪 Stickers Leads test card: the button was not pressed. You can delete it.',
    pressAnswer: '✅ The button works: the press reached the bot',
    pressed: (who) => `✅ Stickers Leads test card: the press (${who}) reached the bot. You can delete it.`,
  },
} satisfies Messages;
