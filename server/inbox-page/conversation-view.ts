import type { MessageMedia } from '../src/domain/lead-message';
import { ApiFailure, type Conversation, type ConversationMessage } from './api';
import { failureText, problem, time, type App } from './app';
import { el, show } from './dom';

/** How often an open conversation asks for its messages again while the page is in view. */
const REFRESH_MS = 5_000;

/**
 * A lead's conversation with the visitor through the bot (`/inbox/api/leads/:n/messages`): who the visitor is in
 * Telegram, the messages oldest first (from the visitor or the team, who wrote, when, the text or «📷 фото»; a team
 * message whether it was delivered — a failed one with its reason —, a visitor's whether the group shows it), and a box
 * that sends the team's answer. The section is drawn at once and filled when the messages arrive, so the rest of the
 * lead's page never waits for it. While the lead's page is open and in view it asks again every few seconds: the
 * visitor's new messages and the states of the team's appear without a reload, and only a change is drawn, so the box
 * keeps what is being typed and the live region speaks only of news.
 */
export function conversationSection(app: App, n: number, open: boolean, typed: string | null): HTMLElement {
  const t = app.t;
  const body = el('div', { class: 'conversation', 'aria-live': 'polite' }, el('p', { class: 'hint' }, t.loading));
  const section = el('section', { id: 'conversation' }, el('h2', {}, t.conversation), body);
  const view = app.view;
  const who = el('p');
  const list = el('div');
  const note = el('p', { class: 'note', role: 'status', id: 'conversation-note' });
  let box: HTMLElement | null = null;
  let drawn = '';
  const load = async (message?: string): Promise<void> => {
    let conversation: Conversation;
    try {
      conversation = await app.api.conversation(n);
    } catch (err) {
      // Once drawn, a failed refresh leaves the conversation as it is: the next one asks again.
      if (view === app.view && !drawn)
        show(
          body,
          problem(app, err, () => void load()),
        );
      return;
    }
    if (view !== app.view) return;
    if (message !== undefined) note.textContent = message;
    const seen = JSON.stringify(conversation);
    if (seen === drawn) return;
    drawn = seen;
    drawConversation(app, conversation, typed, who, list);
    if (open && !conversation.stopped) box ??= composer(app, n, note, load);
    else box = null;
    // Put in place only when the parts change (the first draw, a /stop): moving the box would take its focus.
    const parts = box ? [who, list, note, box] : [who, list, note];
    if (parts.some((part, i) => body.children[i] !== part) || body.children.length !== parts.length) show(body, ...parts);
  };
  void load();
  const refresh = setInterval(() => {
    if (view !== app.view) clearInterval(refresh);
    else if (drawn && document.visibilityState === 'visible') void load();
  }, REFRESH_MS);
  return section;
}

function drawConversation(app: App, conversation: Conversation, typed: string | null, who: HTMLElement, list: HTMLElement): void {
  const t = app.t;
  const bound = conversation.bound;
  // LEADS_CARD_PII=0 hides the account (`{"username":null,"name":""}`), not that the visitor is bound.
  const account = bound ? (bound.username ? `@${bound.username} (${bound.name})` : bound.name || t.hiddenPii) : null;
  who.className = bound ? '' : 'hint';
  who.textContent = account ? t.conversationWith(account) : conversation.stopped ? t.conversationStopped : t.conversationNotBound;
  // As the card warns: the account that opened the link is not the username the form gave (hidden values compare nothing).
  if (bound && (bound.username || bound.name) && typed && (bound.username ?? '').toLowerCase() !== typed.replace(/^@/, '').toLowerCase())
    who.append(' ', el('strong', {}, t.telegramDiffers(typed)));
  show(
    list,
    conversation.messages.length
      ? el(
          'ol',
          { class: 'messages' },
          conversation.messages.map((m) => messageItem(app, m)),
        )
      : el('p', { class: 'hint' }, t.noMessages),
  );
}

function messageItem(app: App, m: ConversationMessage): HTMLElement {
  const t = app.t;
  const media = m.media ? (t.media[m.media as MessageMedia] ?? t.media.other) : null;
  const state =
    m.direction === 'in' ? t.messageInState[m.state] : m.state === 'failed' ? t.messageFailed(m.error) : t.messageState[m.state];
  return el(
    'li',
    { class: `message ${m.direction}${m.state === 'failed' ? ' failed' : ''}`, 'data-state': m.state },
    el(
      'div',
      { class: 'meta' },
      `${m.direction === 'in' ? t.messageIn : t.messageOut}${m.author ? ` · ${m.author}` : ''} · ${time(app, m.at)}`,
    ),
    media ? el('div', { class: 'media' }, media) : null,
    m.text ? el('div', { class: 'text' }, m.text) : null,
    el('div', { class: `state ${m.state}` }, state),
  );
}

function composer(app: App, n: number, note: HTMLElement, reload: (note: string) => Promise<void>): HTMLElement {
  const t = app.t;
  const text = el('textarea', { id: 'conversation-text', name: 'text', rows: 3, maxlength: 4096, placeholder: t.messagePlaceholder });
  const send = el('button', { type: 'submit', class: 'primary' }, t.send);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const value = text.value.trim();
    if (!value) {
      note.textContent = t.messageEmpty;
      text.focus();
      return;
    }
    send.disabled = true;
    try {
      await app.api.sendMessage(n, value);
      text.value = '';
      await reload(t.sent);
    } catch (err) {
      note.textContent =
        err instanceof ApiFailure && err.status === 409 && err.body?.error === 'not_bound' ? t.notBound : failureText(app, err, true);
    } finally {
      send.disabled = false;
    }
  };
  return el(
    'form',
    { class: 'composer', onsubmit: ((e: Event) => void submit(e)) as EventListener },
    el('label', { for: 'conversation-text' }, t.messageLabel),
    text,
    el('div', { class: 'row' }, send),
  );
}
