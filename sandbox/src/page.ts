import { BOT_USER } from './state';

/**
 * The sandbox page: the leads group and the admin chat as Telegram shows them (cards, edits, replies, buttons); a
 * forum's messages grouped by topic. "+ группа" makes a new group (a forum with two topics, if asked) and
 * adds the bot to it, as `npm run leads -- setup` asks the operator to do; a group the bot is not in says so and
 * offers to add it.
 * Pressing a button sends the bot a callback_query; the box under a chat sends a message (a command) as a member, and
 * "↩ ответить" under a bot's message in a group replies to it as that member. A private chat is a visitor's chat with
 * the bot (the visitor's messages on the right, the bot's on the left): its box writes as the visitor, "📷 фото" sends
 * a photo with the box's text as its caption. Photos nobody uploaded (a visitor's) are a tile with the caption;
 * reactions show under their message. `/?chat=<id>` (where a bot link sends the browser) brings that chat into view;
 * `&message=<id>` (where a message link sends it, the inbox's "open the card") marks that message and scrolls to it.
 * The page redraws from server-sent events, keeping what is typed in its boxes; it needs no build step.
 */
export function renderPage(options: { inbox?: boolean } = {}): string {
  return `<!doctype html>
<html lang="ru"><head><meta charset="utf-8"><title>Telegram sandbox — Stickers Leads</title><link rel="icon" href="data:,">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  :root { --bg:#0e1621; --panel:#17212b; --bubble:#182533; --accent:#5eb5f7; --text:#f5f5f5; --muted:#8496a8; }
  * { box-sizing: border-box; }
  /* The page is the window's height: the header stays, the chats share the rest (a row at least 420px, more rows scroll),
     and each chat's log scrolls within it. */
  body { margin:0; height:100vh; display:flex; flex-direction:column; font:15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background:var(--bg); color:var(--text); }
  header { padding:10px 16px; background:var(--panel); display:flex; gap:12px; align-items:center; flex-wrap:wrap; border-bottom:1px solid #000; }
  header h1 { font-size:16px; margin:0 12px 0 0; }
  header button, .compose button { background:#2b5278; color:var(--text); border:0; border-radius:6px; padding:6px 10px; cursor:pointer; }
  header label { color:var(--muted); font-size:13px; }
  main { flex:1; min-height:0; overflow-y:auto; display:grid; grid-template-columns:repeat(auto-fit, minmax(340px, 1fr)); grid-auto-rows:minmax(420px, 1fr); gap:1px; background:#000; }
  section { background:var(--bg); display:flex; flex-direction:column; min-height:0; }
  section h2 { margin:0; padding:10px 16px; font-size:15px; background:var(--panel); }
  section h2 small { color:var(--muted); font-weight:normal; }
  .log { flex:1; min-height:0; padding:12px; overflow-y:auto; }
  .msg { background:var(--bubble); border-radius:10px; padding:8px 12px; margin:0 0 10px; max-width:560px; white-space:pre-wrap; word-wrap:break-word; }
  .msg.user { background:#2b5278; margin-left:auto; }
  .meta { color:var(--muted); font-size:12px; margin-top:4px; }
  .tile { display:flex; align-items:center; justify-content:center; width:220px; max-width:100%; height:140px; border-radius:6px; margin-bottom:4px; background:#22303f; color:var(--muted); font-size:14px; }
  .reactions { display:flex; gap:4px; margin-top:6px; }
  .reactions span { background:#0e1621aa; border-radius:12px; padding:1px 8px; font-size:13px; }
  .act { display:block; background:none; border:0; color:var(--accent); cursor:pointer; font-size:12px; padding:0; margin-top:4px; }
  .reply-form { margin-top:6px; padding:6px; border-radius:6px; }
  section.private h2 { background:#1c2b3a; }
  section.private .msg { max-width:80%; }
  section.focus { outline:2px solid var(--accent); outline-offset:-2px; }
  .msg.target { outline:2px solid var(--accent); }
  .msg img.photo { display:block; max-width:100%; height:auto; border-radius:6px; margin-bottom:4px; background:#fff; }
  .topic { margin:0 0 12px; border-left:3px solid #2b5278; padding-left:8px; }
  .topic h3 { margin:4px 0 8px; font-size:13px; color:var(--accent); }
  .topic.closed h3, .topic.deleted h3 { color:var(--muted); }
  .compose select { background:var(--bg); color:var(--text); border:1px solid #2b5278; border-radius:6px; }
  .reply { border-left:3px solid var(--accent); padding-left:8px; color:var(--muted); font-size:13px; margin-bottom:4px; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
  .kb { display:flex; flex-direction:column; gap:4px; margin-top:8px; }
  .kb .row { display:flex; gap:4px; }
  .kb button, .kb a { flex:1; background:#263545; color:var(--text); border:0; border-radius:6px; padding:7px; cursor:pointer; text-align:center; text-decoration:none; font-size:14px; }
  .kb button:hover, .kb a:hover { background:#2f4356; }
  a { color:var(--accent); }
  code, pre { background:#0b1118; border-radius:4px; padding:0 3px; }
  .compose { display:flex; gap:6px; padding:10px; background:var(--panel); }
  .compose button[data-photo] { background:#263545; }
  .compose input { flex:1; background:var(--bg); color:var(--text); border:1px solid #2b5278; border-radius:6px; padding:7px; }
  #inbox { padding:6px 16px; background:var(--panel); font-size:13px; }
  #inbox:empty { display:none; }
  #toast { position:fixed; bottom:20px; left:50%; transform:translateX(-50%); background:#000c; padding:10px 16px; border-radius:8px; display:none; }
</style></head>
<body>
<header>
  <h1>Telegram sandbox</h1>
  <label>Следующий вызов sendMessage/editMessageText:</label>
  <button data-fault="retry_after">429 (retry_after 5 с)</button>
  <button data-fault="server_error">500</button>
  <button data-fault="hang">зависнуть</button>
  <button data-clear>сбросить сбои</button>
  <button data-new-group title="Новая группа, куда добавлен бот: для npm run leads -- setup">+ группа</button>
  <label id="status">подключение…</label>
  <label id="updates"></label>
</header>
<nav id="inbox" aria-label="Inbox"></nav>
<main id="chats"></main>
<div id="toast" role="status"></div>
<script>
const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
const TAG = { bold: 'b', italic: 'i', underline: 'u', strikethrough: 's', code: 'code', pre: 'pre', spoiler: 'span', blockquote: 'blockquote' };
function render(text, entities) {
  const opens = {}, closes = {};
  for (const e of entities || []) {
    const tag = e.type === 'text_link' ? 'a' : TAG[e.type];
    if (!tag) continue;
    const open = tag === 'a' ? '<a href="' + esc(e.url) + '" target="_blank" rel="noopener">' : '<' + tag + '>';
    (opens[e.offset] ||= []).push({ open, len: e.length });
    (closes[e.offset + e.length] ||= []).unshift('</' + tag + '>');
  }
  let out = '';
  for (let i = 0; i <= text.length; i++) {
    if (closes[i]) out += closes[i].join('');
    if (opens[i]) out += opens[i].sort((a, b) => b.len - a.len).map((o) => o.open).join('');
    if (i < text.length) out += esc(text[i]);
  }
  return out;
}
const time = (s) => new Date(s * 1000).toLocaleTimeString('ru-RU', { hour: '2-digit', minute: '2-digit', second: '2-digit' });
// How the bot gets its updates: a webhook (where, how many wait, the last failure) or getUpdates.
function drawUpdates(state) {
  const hook = state.webhook;
  let line = hook.url
    ? 'webhook: ' + hook.url + ' · в очереди: ' + hook.pending_update_count
      + (hook.last_error_message ? ' · последняя ошибка: ' + hook.last_error_message + ' (' + time(hook.last_error_date) + ')' : '')
    : 'webhook не задан (getUpdates)';
  if (state.pollConflicts > 0) line += ' · конфликтов getUpdates: ' + state.pollConflicts;
  document.getElementById('updates').textContent = line;
}
// "open the inbox as <user>": each person the sandbox knows, launched with launch data the sandbox signs on click.
const INBOX = ${options.inbox ? 'true' : 'false'};
function drawInbox(state) {
  const nav = document.getElementById('inbox');
  if (!INBOX) return;
  const users = new Map();
  for (const chat of state.chats) for (const m of chat.members || []) if (!m.user.is_bot) users.set(m.user.id, m.user);
  nav.innerHTML = [...users.values()].map((u) => '<a href="/sandbox/api/inbox?user_id=' + u.id + '" target="_blank" rel="noopener">открыть инбокс как '
    + esc(u.first_name + (u.last_name ? ' ' + u.last_name : '')) + '</a>').join(' · ');
}
// Reactions as the sandbox keeps them: Telegram's ReactionType objects, emoji strings, or per-user lists of either.
function reactionsOf(m) {
  const out = [];
  const walk = (r) => {
    if (!r) return;
    if (typeof r === 'string') out.push(r);
    else if (Array.isArray(r)) r.forEach(walk);
    else if (typeof r === 'object') {
      if (typeof r.emoji === 'string') out.push(r.emoji);
      else if (r.type === 'custom_emoji' || r.type === 'paid') out.push('✨');
      else walk(r.reaction || r.reactions || Object.values(r));
    }
  };
  walk(m.reactions || m.reaction);
  return out;
}
// A photo the sandbox has no bytes for (a visitor's, a copy of one): the tile, in place of the broken image.
function noPhoto(img) {
  const tile = document.createElement('div');
  tile.className = 'tile';
  tile.textContent = '📷 фото';
  img.replaceWith(tile);
}
// A private chat's visitor: its id is the chat's; their name from their messages, else the chat's title.
const visitors = {};
const visitorOf = (chat) => (chat.messages.find((m) => m.from.id === chat.id) || {}).from || { id: chat.id, is_bot: false, first_name: chat.title };
// A bot link (the sandbox's t.me) under the bot's answer to a member in a group opens as that member (the group's
// /stickers_inbox leads to their private chat); any other, as the visitor.
function linkAs(url, member) {
  if (!member || !url.startsWith(location.origin + '/sandbox/t.me/')) return url;
  return url + (url.includes('?') ? '&' : '?') + 'user_id=' + member.id;
}
const FOCUS = new URLSearchParams(location.search).get('chat');
const FOCUS_MESSAGE = new URLSearchParams(location.search).get('message');
let focused = false;
// The reply box open under a group's message ("chat:message"), kept across redraws.
let replyOpen = null;
function draw(state) {
  drawUpdates(state);
  drawInbox(state);
  const root = document.getElementById('chats');
  // What is typed survives the redraw (the box, the caret); so does the box that had the focus.
  const typed = {};
  root.querySelectorAll('input[data-key]').forEach((i) => (typed[i.dataset.key] = i.value));
  const active = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : undefined;
  const scroll = {};
  root.querySelectorAll('.log').forEach((l) => (scroll[l.dataset.chat] = l.scrollHeight - l.scrollTop - l.clientHeight < 40 ? 'end' : l.scrollTop));
  root.innerHTML = state.chats.filter((c) => !c.migratedTo).map((chat) => {
    const personal = chat.type === 'private';
    if (personal) visitors[chat.id] = visitorOf(chat);
    const bubble = (m) => {
      const reply = m.reply_to_message_id ? chat.messages.find((r) => r.message_id === m.reply_to_message_id) : null;
      const kb = (m.reply_markup?.inline_keyboard || []).map((row) => '<div class="row">' + row.map((b) => b.url
        ? '<a href="' + esc(linkAs(b.url, personal || !reply || reply.from.is_bot ? null : reply.from)) + '" target="_blank" rel="noopener">' + esc(b.text) + ' ↗</a>'
        : b.web_app
        // A Mini App button: opened as the chat's user, with launch data the sandbox signs (the inbox's link).
        ? '<a href="/sandbox/api/inbox?user_id=' + chat.id + '" target="_blank" rel="noopener" title="Mini App: ' + esc(b.web_app.url) + '">' + esc(b.text) + ' 📲</a>'
        : '<button data-chat="' + chat.id + '" data-msg="' + m.message_id + '" data-cb="' + esc(b.callback_data) + '">' + esc(b.text) + '</button>').join('') + '</div>').join('');
      const target = String(chat.id) === FOCUS && String(m.message_id) === FOCUS_MESSAGE ? ' target' : '';
      return '<div class="msg' + (m.from.is_bot ? '' : ' user') + target + '" data-message-id="' + m.message_id + '">'
        + (reply ? '<div class="reply">↩ ' + esc(reply.text.split('\\n')[0]) + '</div>' : '')
        + (m.document ? '<div class="doc">📎 ' + esc(m.document.file_name) + ' · ' + m.document.file_size + ' Б</div>' : '')
        + (m.photo ? (m.from.is_bot ? '<img class="photo" src="/sandbox/files/' + encodeURIComponent(m.photo[0].file_id) + '" width="' + m.photo[0].width
          + '" height="' + m.photo[0].height + '" alt="' + esc(m.text || 'фото') + '" onerror="noPhoto(this)">' : '<div class="tile">📷 фото</div>') : '')
        + render(m.text || '', m.entities)
        + (kb ? '<div class="kb">' + kb + '</div>' : '')
        + (reactionsOf(m).length ? '<div class="reactions">' + reactionsOf(m).map((r) => '<span>' + esc(r) + '</span>').join('') + '</div>' : '')
        + (!personal && m.from.is_bot ? replyBox(chat, m) : '')
        + '<div class="meta">' + esc(m.from.first_name) + ' · #' + m.message_id + ' · ' + time(m.date)
        + (m.edit_date ? ' · изменено ' + time(m.edit_date) + ' (' + m.history.length + ')' : '') + '</div></div>';
    };
    // A forum: its messages grouped by topic, the General topic first.
    const topics = chat.is_forum ? (chat.topics || []) : [];
    let msgs = chat.messages.filter((m) => !topics.length || m.message_thread_id === undefined).map(bubble).join('');
    if (topics.length) {
      msgs = '<div class="topic"><h3># Общая тема (General)</h3>' + (msgs || '<p class="meta">Пока пусто</p>') + '</div>'
        + topics.map((t) => '<div class="topic' + (t.deleted ? ' deleted' : t.closed ? ' closed' : '') + '"><h3># ' + esc(t.name)
          + ' <small>· тема ' + t.id + (t.deleted ? ' · удалена' : t.closed ? ' · закрыта' : '') + '</small></h3>'
          + (chat.messages.filter((m) => m.message_thread_id === t.id).map(bubble).join('') || '<p class="meta">Пока пусто</p>') + '</div>').join('');
    }
    const topicSelect = topics.length
      ? '<select name="thread"><option value="">General</option>' + topics.filter((t) => !t.deleted)
        .map((t) => '<option value="' + t.id + '">' + esc(t.name) + '</option>').join('') + '</select>'
      : '';
    const admins = (chat.members || []).filter((m) => !m.user.is_bot && (m.status === 'creator' || m.status === 'administrator'))
      .map((m) => esc(m.user.first_name) + (m.status === 'creator' ? ' (владелец)' : ' (админ)')).join(', ');
    const bot = (chat.members || []).find((m) => m.user.id === BOT_ID);
    const botOut = chat.type !== 'private' && (!bot || bot.status === 'left' || bot.status === 'kicked');
    const subtitle = chat.id + (admins ? ' · админы: ' + admins : '')
      + (botOut ? ' · бота нет в группе <button data-add-bot="' + chat.id + '">добавить бота</button>' : '');
    const cls = (personal ? ' private' : '') + (String(chat.id) === FOCUS ? ' focus' : '');
    if (personal) {
      const who = visitors[chat.id];
      return '<section class="' + cls.trim() + '" data-chat-id="' + chat.id + '"><h2>' + esc(chat.title) + ' <small>личный чат с @' + BOT_USERNAME + ' · ' + chat.id + '</small></h2>'
        + '<div class="log" data-chat="' + chat.id + '">' + (msgs || '<p class="meta">Пока пусто</p>') + '</div>'
        + '<form class="compose" data-chat="' + chat.id + '" data-visitor><input name="text" data-key="visitor:' + chat.id + '" placeholder="Написать боту как ' + esc(who.first_name) + '" autocomplete="off">'
        + '<button>Отправить</button><button type="button" data-photo title="Фото с подписью из поля">📷 фото</button></form></section>';
    }
    return '<section' + (cls ? ' class="' + cls.trim() + '"' : '') + ' data-chat-id="' + chat.id + '"><h2>' + esc(chat.title) + ' <small>' + subtitle + '</small></h2>'
      + '<div class="log" data-chat="' + chat.id + '">' + (msgs || '<p class="meta">Пока пусто</p>') + '</div>'
      + '<form class="compose" data-chat="' + chat.id + '">' + topicSelect + '<input name="text" data-key="compose:' + chat.id + '" placeholder="Написать как участник, например /stickers_new" autocomplete="off"><button>Отправить</button></form></section>';
  }).join('');
  root.querySelectorAll('input[data-key]').forEach((i) => {
    if (typed[i.dataset.key] !== undefined) i.value = typed[i.dataset.key];
    if (i.dataset.key === active) i.focus();
  });
  // A log at its newest message follows the new ones; one scrolled back stays where it was.
  root.querySelectorAll('.log').forEach((l) => {
    const at = scroll[l.dataset.chat];
    l.scrollTop = at === undefined || at === 'end' ? l.scrollHeight : at;
  });
  if (FOCUS && !focused) {
    const section = root.querySelector('section[data-chat-id="' + CSS.escape(FOCUS) + '"]');
    if (section) {
      focused = true;
      // Only when it is out of sight: the page's header stays where it is.
      const box = section.getBoundingClientRect();
      if (box.left < 0 || box.right > innerWidth || box.top > innerHeight) section.scrollIntoView({ block: 'start' });
      const input = section.querySelector('form[data-visitor] input');
      if (input && !active) input.focus({ preventScroll: true });
      const target = section.querySelector('.msg.target');
      if (target) {
        // Its chat's log shows it, not the newest message; a redraw keeps the log where it is.
        const log = target.closest('.log');
        log.scrollTop += target.getBoundingClientRect().top - log.getBoundingClientRect().top - 8;
      }
    }
  }
}
// Under a bot's message in a group: "↩ ответить", which opens a box replying to it as the page's member.
function replyBox(chat, m) {
  const key = chat.id + ':' + m.message_id;
  if (replyOpen !== key) return '<button class="act" data-open-reply="' + key + '">↩ ответить как участник</button>';
  return '<form class="compose reply-form" data-chat="' + chat.id + '" data-reply-to="' + m.message_id + '"'
    + (m.message_thread_id !== undefined ? ' data-thread="' + m.message_thread_id + '"' : '') + '>'
    + '<input name="text" data-key="reply:' + key + '" placeholder="Ответ на #' + m.message_id + ' как участник" autocomplete="off"><button>Ответить</button></form>';
}
const BOT_ID = ${BOT_USER.id};
const BOT_USERNAME = ${JSON.stringify(BOT_USER.username)};
async function api(path, body) {
  const res = await fetch('/sandbox/api/' + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body || {}) });
  const answer = await res.json();
  if (!res.ok) toast('Песочница отказала: ' + (answer.error || res.status));
  return answer;
}
function toast(text) {
  const t = document.getElementById('toast');
  t.textContent = text; t.style.display = 'block';
  clearTimeout(toast.timer); toast.timer = setTimeout(() => (t.style.display = 'none'), 3000);
}
let answered = 0;
// The latest state, for a redraw of the page's own (a reply box opened).
let last = null;
document.addEventListener('click', async (e) => {
  const b = e.target.closest('button[data-cb]');
  // In a private chat the visitor presses (the bot's "write about #N" buttons); in a group, the page's member.
  if (b) { await api('press', { chat_id: b.dataset.chat, message_id: b.dataset.msg, data: b.dataset.cb, from: visitors[b.dataset.chat] }); return; }
  const f = e.target.closest('button[data-fault]');
  if (f) {
    for (const method of ['sendMessage', 'editMessageText']) await api('faults', { method, kind: f.dataset.fault, retry_after: 5 });
    toast('Сбой включён: ' + f.textContent);
  }
  const open = e.target.closest('button[data-open-reply]');
  if (open) {
    replyOpen = open.dataset.openReply;
    if (last) draw(last);
    const box = document.querySelector('input[data-key="reply:' + replyOpen + '"]');
    if (box) box.focus();
    return;
  }
  const photo = e.target.closest('button[data-photo]');
  if (photo) {
    const form = photo.closest('form');
    const caption = form.text.value.trim();
    // Cleared before the redraw the message brings keeps what the box holds.
    form.text.value = '';
    await api('say', { chat_id: form.dataset.chat, text: caption, photo: true, from: visitors[form.dataset.chat] });
    return;
  }
  if (e.target.closest('button[data-clear]')) { await api('faults/clear'); toast('Сбои сброшены'); }
  const add = e.target.closest('button[data-add-bot]');
  if (add) { await api('members', { chat_id: add.dataset.addBot, user_id: BOT_ID, status: 'member' }); toast('Бот добавлен'); }
  if (e.target.closest('button[data-new-group]')) {
    const title = prompt('Название группы', 'Новая группа');
    if (!title) return;
    const forum = confirm('С темами (форум: «Заявки» и «Админы»)?');
    const made = await api('chats', { title, is_forum: forum, ...(forum ? { topics: [{ id: 2, name: 'Заявки' }, { id: 3, name: 'Админы' }] } : {}) });
    if (made.chat) { await api('members', { chat_id: made.chat.id, user_id: BOT_ID, status: 'member' }); toast('Группа создана, бот добавлен'); }
  }
});
document.addEventListener('submit', async (e) => {
  e.preventDefault();
  const form = e.target; const text = form.text.value.trim();
  if (!text) return;
  form.text.value = '';
  if (form.dataset.replyTo !== undefined) {
    replyOpen = null;
    await api('say', { chat_id: form.dataset.chat, text, reply_to_message_id: form.dataset.replyTo, ...(form.dataset.thread ? { thread_id: form.dataset.thread } : {}) });
  } else if (form.dataset.visitor !== undefined) {
    await api('say', { chat_id: form.dataset.chat, text, from: visitors[form.dataset.chat] });
  } else {
    await api('say', { chat_id: form.dataset.chat, text, ...(form.thread && form.thread.value ? { thread_id: form.thread.value } : {}) });
  }
});
const events = new EventSource('/sandbox/api/events');
events.onopen = () => (document.getElementById('status').textContent = 'подключено');
events.onerror = () => (document.getElementById('status').textContent = 'нет связи, переподключение…');
events.onmessage = (e) => {
  const state = JSON.parse(e.data);
  last = state;
  draw(state);
  if (state.callbackAnswers.length > answered) {
    const last = state.callbackAnswers[state.callbackAnswers.length - 1];
    if (answered > 0 || document.visibilityState === 'visible') last.text && toast(last.text);
    answered = state.callbackAnswers.length;
  }
};
</script>
</body></html>`;
}
