import type { LandingMessages } from './ru';

/** Every text of the page and the fallback message in English (LANDING_LOCALE=en); the shape is ru.ts's. */
export const en = {
  meta: {
    title: 'Stickers of your heroes — Stickers',
    description: 'We draw a Telegram sticker set from your photos: a wedding, a team, a pet, a party.',
  },
  hero: {
    eyebrow: 'Stickers · custom sticker packs',
    title: 'Stickers of your heroes — in three days',
    lead:
      "Send a few photos and we'll draw a Telegram sticker set in one style: a wedding, a team, a pet or a party. " +
      'The first sketches are free.',
    points: [
      ['12 stickers or more', ' in a set'],
      ['3 days', ' to a finished pack'],
      ['changes', ' until you like it'],
    ] as [string, string][],
  },
  form: {
    title: 'Send a request',
    labels: {
      name: 'Name',
      telegram: 'Telegram username',
      phone: 'Phone',
      date: 'Event date',
      guests: 'How many guests or heroes',
      comment: 'What would you like?',
    },
    telegramHint: '@name or a t.me/name link',
    optional: 'optional',
    trap: 'Company',
    submit: 'Send request',
    submitting: 'Sending…',
    contactUs: 'Or message us on Telegram: ',
    captchaNoScript: 'The “I am not a robot” check needs JavaScript — without it the request cannot be sent.',
    consent: 'By pressing the button you agree that we use your contacts to answer your request.',
    states: {
      throttled: 'Too many requests in a row. Try again in a few minutes — everything you typed is kept.',
      error: 'The request could not be sent. Try again — everything you typed is kept.',
      invalid: 'Check the fields marked below.',
      expired: 'The form was open for a long time — check your details and press “Send request” again.',
      captcha: 'Please pass the check again — everything you typed is kept.',
    },
  },
  sent: {
    numbered: (lead: number) => `Request #${lead} sent!`,
    plain: 'Request sent!',
    next: 'We will message you on Telegram within a working day.',
    telegram: 'Get the answer in Telegram',
    again: 'Send another request',
  },
  missing: {
    notFound: 'There is no such page.',
    notFoundTitle: 'Page not found — Stickers',
    failedTitle: 'The page did not open — Stickers',
    failed: 'The page did not open. Please try again a little later.',
    back: 'Send a request',
  },
  message: {
    fallbackWarning: (requestId: string) =>
      `⚠️ Fallback channel: the leads server did not answer — the request is not in the database (request_id ${requestId})`,
    fallbackReason: (reason: string) =>
      `Reason: ${
        {
          network: 'the server is unreachable',
          timeout: 'the server did not answer within 5 s',
          '401': "the server refused the landing's secret (LEADS_SECRET differs from the server's)",
          '404': 'the server answered 404 (check LEADS_ENDPOINT)',
          '429 secret': "the server locked the landing's address out after wrong secrets",
          '429 flood': "too many requests from the landing's address",
          '503': 'the server cannot store the request (503)',
        }[reason] ?? `the server answered ${reason}`
      }`,
    title: 'Request from the website',
    titleWithId: (requestId: string) => `Request from the website (request_id ${requestId})`,
    name: 'Name',
    phone: 'Phone',
    optional: { date: 'Date', guests: 'Guests', comment: 'Comment' },
    captchaUnchecked: '⚠️ Captcha not checked: the verification service was unavailable',
    consent: (time: string) => `☑️ Consent to data processing: ${time}`,
  },
  spoolAlerts: {
    malformed: (requestId: string, reason: string, more: number, dir: string) =>
      `🚨 Landing: a request's file in the spool is damaged (request_id ${requestId}: ${reason})${more > 0 ? ` (and ${more} more)` : ''}. ` +
      `It was set aside in ${dir} and is not retried — look at it by hand ` +
      '(docs/operations.md, "The server was down — what happened to the leads").',
    stale: (waiting: number, oldestWait: string, requestId: string, lastError: string | null) =>
      `⏳ Landing: requests have waited in the spool for over an hour — the leads server does not take them. ` +
      `Waiting: ${waiting}, the oldest for ${oldestWait} (request_id ${requestId}).${lastError ? ` Last error: ${lastError}.` : ''} ` +
      'Replays go on by themselves; what to check — docs/operations.md, "The server was down — what happened to the leads".',
    rejected: (codes: string, requestId: string, dir: string) =>
      `🚨 Landing: the server refused a request from the spool (422: ${codes}), request_id ${requestId}. ` +
      `It was set aside in ${dir} and is not retried — enter it by hand ` +
      '(docs/operations.md, "The server was down — what happened to the leads").',
  },
} satisfies LandingMessages;
