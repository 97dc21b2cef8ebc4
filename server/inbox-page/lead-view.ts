import { formatPhone } from '@stickers/shared';
import { LEAD_TRANSITIONS, type LeadStatus } from '../src/domain/lead-status';
import { ApiFailure, type LeadDetail, type LeadItem } from './api';
import { failureText, header, link, problem, section, statusBadge, time, type App } from './app';
import { confirmAction } from './confirm';
import { conversationSection } from './conversation-view';
import { el, show } from './dom';

/**
 * A lead's page: its fields and links, its conversation with the visitor, its source, consent, repeats and story; the
 * status buttons and the erasure.
 */

function dl(rows: [string, Node | string | null][]): HTMLElement {
  return el(
    'dl',
    { class: 'fields' },
    rows.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v ?? '—')]),
  );
}

function personal(app: App, lead: LeadItem, value: string | number | null): string | null {
  if (value !== null && value !== '') return String(value);
  if (lead.anonymised_at) return app.t.erasedValue;
  return app.me.card_pii ? null : app.t.hiddenPii;
}

function list(items: string[], empty: string): HTMLElement {
  return items.length
    ? el(
        'ul',
        { class: 'plain' },
        items.map((i) => el('li', {}, i)),
      )
    : el('p', { class: 'hint' }, empty);
}

function externalLink(app: App, url: string, text: string, className?: string): HTMLAnchorElement {
  const webApp = app.launch.webApp;
  return el(
    'a',
    {
      href: url,
      class: className,
      target: '_blank',
      rel: 'noopener noreferrer',
      onclick: ((event: MouseEvent) => {
        if (webApp?.openTelegramLink && url.startsWith('https://t.me/')) {
          event.preventDefault();
          webApp.openTelegramLink(url);
        }
      }) as EventListener,
    },
    text,
  );
}

/** The lead's phone as people read it, dialled by a tap (`tel:` with the stored E.164 number). */
function phoneLink(phone: string): HTMLAnchorElement {
  return el('a', { href: `tel:${phone}`, class: 'contact' }, formatPhone(phone));
}

/** The lead's username, opening the chat with them (`t.me`, as the card's "✈️ Написать" button does). */
function usernameLink(app: App, telegram: string): HTMLAnchorElement {
  const name = telegram.replace(/^@/, '');
  return externalLink(app, `https://t.me/${encodeURIComponent(name)}`, `@${name}`, 'contact');
}

/**
 * A repeat as the card's repeat block shows it: when, the fields that differ with their values (or that they are
 * hidden), "same data" when none does, and which contact alone matched when the other one differs.
 */
function repeatBlock(app: App, lead: LeadItem, repeat: LeadDetail['repeats'][number]): HTMLElement[] {
  const t = app.t;
  const lines: HTMLElement[] = [el('strong', {}, t.repeatAt(time(app, repeat.at)))];
  if (lead.anonymised_at) return lines;
  const changed = (Object.keys(t.fields) as (keyof typeof t.fields)[]).filter(
    (f): f is keyof LeadDetail['repeats'][number]['changes'] => f in repeat.changes,
  );
  const shown = changed.filter((f) => repeat.changes[f] !== null);
  const rows: [string, Node | string | null][] = shown.map((f) => {
    const value = repeat.changes[f]!;
    if (f === 'phone') return [t.fields[f], phoneLink(value)];
    if (f === 'telegram') return [t.fields[f], usernameLink(app, value)];
    return [t.fields[f], value];
  });
  if (rows.length) lines.push(dl(rows));
  if (shown.length < changed.length) lines.push(el('span', { class: 'hint' }, t.repeatHidden));
  if (changed.length === 0) lines.push(el('span', { class: 'hint' }, t.repeatSame));
  // A repeat is matched by username or by phone: a different phone means only the (public) username matched.
  if ('phone' in repeat.changes) lines.push(el('strong', { class: 'warn' }, t.repeatByUsername));
  if ('telegram' in repeat.changes) lines.push(el('strong', { class: 'warn' }, t.repeatByPhone));
  return lines;
}

export async function renderLead(app: App, n: number, message: string | null = null): Promise<void> {
  const view = app.view;
  const t = app.t;
  show(app.root, header(app, null), el('p', { class: 'hint' }, t.loading));
  let detail: LeadDetail;
  try {
    detail = await app.api.lead(n);
  } catch (err) {
    if (view !== app.view) return;
    show(app.root, header(app, null), backLink(app), problem(app, err));
    return;
  }
  if (view !== app.view) return;
  const lead = detail.lead;
  const note = el('p', { class: 'note', role: 'status', id: 'lead-note' }, message ?? '');
  const src = lead.source;
  const sourceRows: [string, string | null][] = src
    ? (Object.keys(t.sourceFields) as (keyof typeof t.sourceFields)[]).filter((k) => src[k]).map((k) => [t.sourceFields[k], src[k]])
    : [];
  const consent = lead.consent;

  // Shown only for a lead not erased (an erased card has no buttons, and the API refuses its every change); a viewer who
  // may not change it reads why.
  const actions = el('div', { class: 'row wrap actions' });
  if (!app.me.may_change) actions.append(el('p', { class: 'hint', id: 'may-not-change' }, t.actionForbidden));
  for (const to of app.me.may_change ? (LEAD_TRANSITIONS[lead.status] as readonly LeadStatus[]) : []) {
    actions.append(
      el(
        'button',
        {
          type: 'button',
          class: to === 'spam' ? 'danger' : 'primary',
          'data-status': to,
          onclick: () => void changeStatus(app, lead, to),
        },
        t.statusButton(lead.status, to),
      ),
    );
  }

  show(
    app.root,
    header(app, null),
    backLink(app),
    el('h1', {}, t.lead(lead.lead_number), ' ', statusBadge(app, lead.status)),
    note,
    detail.card_url ? el('p', {}, externalLink(app, detail.card_url, t.cardLink, 'alone')) : el('p', { class: 'hint' }, t.noCard),
    lead.anonymised_at ? el('p', { class: 'hint' }, t.anonymised(time(app, lead.anonymised_at))) : null,
    lead.anonymised_at ? null : section(t.actions, actions),
    dl([
      [t.fields.name, personal(app, lead, lead.name)],
      [t.fields.telegram, lead.telegram ? usernameLink(app, lead.telegram) : personal(app, lead, null)],
      [t.fields.phone, lead.phone ? phoneLink(lead.phone) : personal(app, lead, null)],
      [t.fields.date, personal(app, lead, lead.date)],
      [t.fields.guests, personal(app, lead, lead.guests)],
      [t.fields.comment, personal(app, lead, lead.comment)],
      [t.fields.created, time(app, lead.created_at)],
      [t.fields.received, time(app, lead.received_at)],
      [t.fields.published, time(app, lead.published_at)],
    ]),
    // Erased: its messages are deleted with it, and no visitor is bound any more.
    lead.anonymised_at
      ? section(t.conversation, el('p', { class: 'hint', id: 'conversation-erased' }, t.conversationErased))
      : conversationSection(app, lead.lead_number, app.me.may_change, lead.telegram),
    section(t.sourceTitle, sourceRows.length ? dl(sourceRows) : el('p', { class: 'hint' }, t.noSource)),
    section(
      t.consent,
      el(
        'p',
        {},
        consent ? t.consentAccepted(time(app, consent.accepted_at)) : t.consentNone,
        consent?.policy_url ? [' · ', externalLink(app, consent.policy_url, t.policy)] : null,
      ),
    ),
    section(
      t.repeats,
      detail.repeats.length
        ? el(
            'ul',
            { class: 'plain repeats' },
            [...detail.repeats].reverse().map((r) => el('li', {}, repeatBlock(app, lead, r))),
          )
        : el('p', { class: 'hint' }, t.noRepeats),
    ),
    section(
      t.history,
      list(
        detail.history.map((h) => `${time(app, h.at)} · ${t.historyLine(t.statusLabel[h.status] ?? h.status, h.by)}`),
        t.noHistory,
      ),
    ),
    section(
      t.events,
      list(
        detail.events.map((e) => `${time(app, e.at)} · ${(t.eventKinds as Record<string, string>)[e.kind] ?? t.eventOther}`),
        t.noEvents,
      ),
    ),
    app.me.manager && !lead.anonymised_at
      ? section(t.erase, el('button', { type: 'button', class: 'danger', id: 'erase', onclick: () => void erase(app, lead) }, t.erase))
      : null,
  );
}

function backLink(app: App): HTMLElement {
  return el('p', {}, link(app, new URLSearchParams(sessionStorage.getItem('inbox.list') ?? ''), { class: 'alone' }, `← ${app.t.back}`));
}

async function changeStatus(app: App, lead: LeadItem, to: LeadStatus): Promise<void> {
  const t = app.t;
  const view = app.view;
  if (!(await confirmAction(app, t.confirmStatus(lead.lead_number, t.statusLabel[to])))) return;
  let message: string;
  try {
    const { lead: changed } = await app.api.setStatus(lead.lead_number, to, lead.status);
    message = t.statusChanged(t.statusLabel[changed.status]);
  } catch (err) {
    const current = err instanceof ApiFailure && err.status === 409 ? (err.body?.status as LeadStatus | undefined) : undefined;
    message = current ? t.conflict(t.statusLabel[current] ?? current) : failureText(app, err, true);
  }
  // The manager went elsewhere (the back button) while it was sent: the lead's page is not drawn over where they are.
  if (view !== app.view) return;
  await renderLead(app, lead.lead_number, message);
}

async function erase(app: App, lead: LeadItem): Promise<void> {
  const t = app.t;
  const view = app.view;
  if (!(await confirmAction(app, t.confirmErase(lead.lead_number)))) return;
  let message: string;
  try {
    await app.api.erase(lead.lead_number);
    message = t.erased;
  } catch (err) {
    message = failureText(app, err, true);
  }
  if (view !== app.view) return;
  await renderLead(app, lead.lead_number, message);
}
