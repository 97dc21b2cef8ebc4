/**
 * Forum topics: with LEADS_THREAD_ID the landing's fallback and direct messages go into that topic of the
 * leads group (`message_thread_id`), against the Telegram sandbox (a forum there) and a stand-in for POST /leads. A
 * topic Telegram refuses (closed, deleted) never costs the request: the message goes into the chat's General topic.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LandingConfigError, loadLandingEnv } from '~/env.server';
import { postForm } from './post-form';
import { LEADS_CHAT, captureConsole, configuredEnv, ENV_KEYS, fallbackText, setEnv, standIns, type StandInAnswer } from './support';

const THREAD = 12;
let answer: StandInAnswer = { status: 503 };
let logs: string[] = [];
let ipCounter = 0;
const { sandbox, leads } = standIns(() => answer);
const KEYS = [...ENV_KEYS, 'LEADS_THREAD_ID'];
const VISITOR = { name: 'Анна Ким', telegram: '@anna_k', phone: '+79991234567' };
const LINES = ['Имя: Анна Ким', 'Telegram: @anna_k', 'Телефон: +7 999 123 45 67'];

const submit = () => postForm({ values: VISITOR, forwardedFor: `198.51.100.${++ipCounter}` });
const routeOf = (requestId: string) => logs.find((l) => l.startsWith(`[request] ${requestId} → `))?.split(' → ')[1];

beforeEach(() => {
  answer = { status: 503 };
  // The leads group is a forum with its topic 12 (the sandbox was emptied before each test).
  sandbox.createTopic(LEADS_CHAT, 'Заявки', THREAD);
  setEnv(configuredEnv(leads.url, sandbox, { TRUST_PROXY: '1', LEADS_THREAD_ID: String(THREAD) }), KEYS);
  logs = captureConsole('log');
});
afterEach(() => {
  vi.restoreAllMocks();
  setEnv({}, ['LEADS_THREAD_ID']);
});

describe('LEADS_THREAD_ID', () => {
  it('the fallback message goes into the topic, asked for with message_thread_id', async () => {
    const { requestId, result } = await submit();
    expect(result.state).toBe('sent');
    expect(routeOf(requestId)).toMatch(/^fallback/);
    const [message] = sandbox.topicMessages(LEADS_CHAT, THREAD);
    expect(message.text).toBe(fallbackText(requestId, 'сервер не может сохранить заявку (503)', LINES));
    expect(sandbox.topicMessages(LEADS_CHAT, null)).toEqual([]);
    expect(sandbox.callsOf('sendMessage')[0].params.message_thread_id).toBe(THREAD);
  });

  it('the direct message (no server configured) goes into the topic too', async () => {
    setEnv(
      {
        ...configuredEnv(leads.url, sandbox, { TRUST_PROXY: '1', LEADS_THREAD_ID: String(THREAD) }),
        LEADS_ENDPOINT: undefined,
        LEADS_SECRET: undefined,
      },
      KEYS,
    );
    const { requestId } = await submit();
    expect(routeOf(requestId)).toBe('direct');
    expect(sandbox.topicMessages(LEADS_CHAT, THREAD).map((m) => m.text.split('\n')[0])).toEqual([
      `Заявка с сайта (request_id ${requestId})`,
    ]);
  });

  it.each([
    ['closed', 'Bad Request: TOPIC_CLOSED'],
    ['deleted', 'Bad Request: message thread not found'],
  ])('a %s topic: the fallback message goes into the General topic instead, the request is not lost', async (how, description) => {
    if (how === 'closed') sandbox.closeTopic(LEADS_CHAT, THREAD);
    else sandbox.deleteTopic(LEADS_CHAT, THREAD);
    const { requestId, result } = await submit();
    expect(result.state).toBe('sent');
    const route = routeOf(requestId)!;
    expect(route).toMatch(/^fallback/);
    expect(route).toContain(`topic ${THREAD} refused: telegram 400: ${description}; in the chat's General topic`);
    expect(sandbox.topicMessages(LEADS_CHAT, null).map((m) => m.text)).toEqual([
      fallbackText(requestId, 'сервер не может сохранить заявку (503)', LINES),
    ]);
  });

  it('without LEADS_THREAD_ID nothing changes: the message goes to the chat, no message_thread_id', async () => {
    setEnv(configuredEnv(leads.url, sandbox, { TRUST_PROXY: '1' }), KEYS);
    const { requestId } = await submit();
    expect(sandbox.topicMessages(LEADS_CHAT, null).map((m) => m.text)).toEqual([
      fallbackText(requestId, 'сервер не может сохранить заявку (503)', LINES),
    ]);
    expect(sandbox.callsOf('sendMessage')[0].params).not.toHaveProperty('message_thread_id');
  });

  it('a bad value stops the start with one line', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadLandingEnv(env);
        return [];
      } catch (err) {
        return (err as LandingConfigError).problems;
      }
    };
    const base = { TELEGRAM_BOT_TOKEN: sandbox.token, LEADS_CHAT_ID: String(LEADS_CHAT) };
    expect(problems({ ...base, LEADS_THREAD_ID: 'general' })).toEqual([
      'LEADS_THREAD_ID must be a topic id (message_thread_id), a positive whole number like 12 (got "general")',
    ]);
    expect(problems({ ...base, LEADS_THREAD_ID: '0' })).toHaveLength(1);
    expect(problems({ LEADS_THREAD_ID: '12' })).toEqual(['LEADS_THREAD_ID is set but LEADS_CHAT_ID is not (a topic of which chat?)']);
    expect(loadLandingEnv({ ...base, LEADS_THREAD_ID: '12' }).telegram).toMatchObject({ chatId: String(LEADS_CHAT), threadId: 12 });
  });
});
