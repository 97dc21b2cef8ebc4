import { BOT_USER } from './state';

/**
 * The sandbox page: the leads group and the admin chat as Telegram shows them (cards, edits, replies, buttons); a
 * forum's messages grouped by topic. "＋ группа" makes a new group (a forum with two topics, if asked) and
 * adds the bot to it, as `npm run leads -- setup` asks the operator to do; a group the bot is not in says so and
 * offers to add it.
 * Pressing a button sends the bot a callback_query; the box under a chat sends a message (a command) as a member.
 * The page redraws from server-sent events; it needs no build step.
 */
export function renderPage(options: { inbox?: boolean } = {}): string {
  return `<!doctype html>
<html lang="ru"><head><meta charset="utf-8"><title>Telegram sandbox — Stickers Leads</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  :root { --bg:#0e1621; --panel:#17212b; --bubble:#182533; --accent:#5eb5f7; --text:#f5f5f5; --muted:#8496a8; }
  * { box-sizing: border-box; }
  body { margin:0; font:15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background:var(--bg); color:var(--text); }
  header { padding:10px 16px; background:var(--panel); display:flex; gap:12px; align-items:center; flex-wrap:wrap; border-bottom:1px solid #000; }
  header h1 { font-size:16px; margin:0 12px 0 0; }
  header button, .compose button { background:#2b5278; color:var(--text); border:0; border-radius:6px; padding:6px 10px; cursor:pointer; }
  header label { color:var(--muted); font-size:13px; }
  main { display:grid; grid-template-columns:repeat(auto-fit, minmax(340px, 1fr)); gap:1px; background:#000; min-height:calc(100vh - 50px); }
  section { background:var(--bg); display:flex; flex-direction:column; }
  section h2 { margin:0; padding:10px 16px; font-size:15px; background:var(--panel); }
  section h2 small { color:var(--muted); font-weight:normal; }
  .log { flex:1; padding:12px; overflow-y:auto; max-height:calc(100vh - 160px); }
  .msg { background:var(--bubble); border-radius:10px; padding:8px 12px; margin:0 0 10px; max-width:560px; white-space:pre-wrap; word-wrap:break-word; }
  .msg.user { background:#2b5278; margin-left:auto; }
  .meta { color:var(--muted); font-size:12px; margin-top:4px; }
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
  <button data-new-group title="Новая группа, куда добавлен бот: для npm run leads -- setup">＋ группа</button>
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
function draw(state) {
  drawUpdates(state);
  drawInbox(state);
  const root = document.getElementById('chats');
  const scroll = {};
  root.querySelectorAll('.log').forEach((l) => (scroll[l.dataset.chat] = l.scrollHeight - l.scrollTop - l.clientHeight < 40));
  root.innerHTML = state.chats.filter((c) => !c.migratedTo).map((chat) => {
    const bubble = (m) => {
      const reply = m.reply_to_message_id ? chat.messages.find((r) => r.message_id === m.reply_to_message_id) : null;
      const kb = (m.reply_markup?.inline_keyboard || []).map((row) => '<div class="row">' + row.map((b) => b.url
        ? '<a href="' + esc(b.url) + '" target="_blank" rel="noopener">' + esc(b.text) + ' ↗</a>'
        : b.web_app
        // A Mini App button: opened as the chat's user, with launch data the sandbox signs (the inbox's link).
        ? '<a href="/sandbox/api/inbox?user_id=' + chat.id + '" target="_blank" rel="noopener" title="Mini App: ' + esc(b.web_app.url) + '">' + esc(b.text) + ' ⧉</a>'
        : '<button data-chat="' + chat.id + '" data-msg="' + m.message_id + '" data-cb="' + esc(b.callback_data) + '">' + esc(b.text) + '</button>').join('') + '</div>').join('');
      return '<div class="msg' + (m.from.is_bot ? '' : ' user') + '" data-message-id="' + m.message_id + '">'
        + (reply ? '<div class="reply">↩ ' + esc(reply.text.split('\\n')[0]) + '</div>' : '')
        + (m.document ? '<div class="doc">📎 ' + esc(m.document.file_name) + ' · ' + m.document.file_size + ' Б</div>' : '')
        + (m.photo ? '<img class="photo" src="/sandbox/files/' + encodeURIComponent(m.photo[0].file_id) + '" width="' + m.photo[0].width
          + '" height="' + m.photo[0].height + '" alt="' + esc(m.text || 'фото') + '">' : '')
        + render(m.text, m.entities)
        + (kb ? '<div class="kb">' + kb + '</div>' : '')
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
    return '<section><h2>' + esc(chat.title) + ' <small>' + subtitle + '</small></h2>'
      + '<div class="log" data-chat="' + chat.id + '">' + (msgs || '<p class="meta">Пока пусто</p>') + '</div>'
      + '<form class="compose" data-chat="' + chat.id + '">' + topicSelect + '<input name="text" placeholder="Написать как участник, например /stickers_new" autocomplete="off"><button>Отправить</button></form></section>';
  }).join('');
  root.querySelectorAll('.log').forEach((l) => { if (scroll[l.dataset.chat] !== false) l.scrollTop = l.scrollHeight; });
}
const BOT_ID = ${BOT_USER.id};
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
document.addEventListener('click', async (e) => {
  const b = e.target.closest('button[data-cb]');
  if (b) { await api('press', { chat_id: b.dataset.chat, message_id: b.dataset.msg, data: b.dataset.cb }); return; }
  const f = e.target.closest('button[data-fault]');
  if (f) {
    for (const method of ['sendMessage', 'editMessageText']) await api('faults', { method, kind: f.dataset.fault, retry_after: 5 });
    toast('Сбой включён: ' + f.textContent);
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
  if (text) await api('say', { chat_id: form.dataset.chat, text, ...(form.thread && form.thread.value ? { thread_id: form.thread.value } : {}) });
  form.text.value = '';
});
const events = new EventSource('/sandbox/api/events');
events.onopen = () => (document.getElementById('status').textContent = 'подключено');
events.onerror = () => (document.getElementById('status').textContent = 'нет связи, переподключение…');
events.onmessage = (e) => {
  const state = JSON.parse(e.data);
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
