/**
 * The OpenAPI document tells the truth: real answers of every JSON route, got over HTTP from the real app, are valid
 * against the document's own schemas (Ajv, the document's OpenAPI 3.0 schemas read as its version says: `nullable`
 * adds null to the `type` beside it and to nothing else). A lead with no source, consent or captcha and one with all
 * of them; POST /leads's 201, 200, 401, 413, 422 and 429; the trace; the ops doors; the inbox's list and lead; the
 * wrong-secret lockout on every route behind the secret.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { SECRET_HEADER } from '@stickers/shared';
import request from 'supertest';
import type { SandboxUser } from '@stickers/telegram-sandbox';
import { lead, memberActions, postLead, sandboxSuite, SECRET, waitFor } from './harness';
import { inboxCall, secretGet } from './support/inbox-client';
import { WebhookReceiver } from './support/webhook-receiver';

const { tmp, sandbox, start, boot } = sandboxSuite();
const VISITOR: SandboxUser = { id: 7001, is_bot: false, first_name: 'Анна', last_name: 'Ким', username: 'anna_k' };

/** OpenAPI 3.0 to JSON Schema: `nullable: true` puts null in the `type` beside it (3.0.3's reading); examples go. */
function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'nullable' || key === 'example') continue;
    out[key] = toJsonSchema(value);
  }
  const { nullable, type } = node as { nullable?: boolean; type?: unknown };
  if (nullable === true && typeof type === 'string') out.type = [type, 'null'];
  return out;
}

function validatorOf(doc: any) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...(toJsonSchema({ components: doc.components }) as object), $id: 'openapi.json' });
  return (path: string, method: string, status: number): ValidateFunction => {
    const response = doc.paths[path][method].responses[String(status)];
    if (!response) throw new Error(`${method} ${path} has no ${status} in the document`);
    const schema = response.content['application/json'].schema;
    return ajv.compile(JSON.parse(JSON.stringify(toJsonSchema(schema)).replace(/"#\/components\//g, '"openapi.json#/components/')));
  };
}

describe('the answers match the OpenAPI document', () => {
  it('every JSON route answers as its schema in the document says', async () => {
    const server = await start({ dbPath: join(tmp.dir, 'answers.sqlite'), env: { LEADS_IP_LIMIT: '3' } });
    const doc: any = (await request(server.app.getHttpServer()).get('/openapi.json')).body;
    const schemaOf = validatorOf(doc);
    const seen: string[] = [];
    const check = (path: string, method: string, answer: { status: number; body: unknown }) => {
      const validate = schemaOf(path, method, answer.status);
      expect([`${method} ${path} ${answer.status}`, validate(answer.body) ? null : validate.errors]).toEqual([
        `${method} ${path} ${answer.status}`,
        null,
      ]);
      seen.push(`${method} ${path} ${answer.status}`);
    };

    const bare = lead({ client_ip: '198.51.100.7' }) as { request_id: string };
    check('/leads', 'post', await postLead(server, bare));
    check('/leads', 'post', await postLead(server, bare));
    const full = <{ request_id: string }>lead({
      client_ip: '198.51.100.8',
      source: { landing: 'wedding', utm_source: 'ya', utm_campaign: 'spring' },
      consent: { accepted_at: new Date(server.clock.now()).toISOString(), policy_url: 'https://example.com/privacy' },
      captcha: 'passed',
    });
    check('/leads', 'post', await postLead(server, full));
    await server.outbox.whenIdle();
    check('/leads', 'post', await postLead(server, { ...lead(), name: '' }));
    check('/leads', 'post', await postLead(server, '[1]'));
    check('/leads', 'post', await postLead(server, lead({ comment: 'x'.repeat(70_000) })));
    for (let i = 0; i < 3; i++) await postLead(server, lead({ client_ip: '198.51.100.9' }));
    check('/leads', 'post', await postLead(server, lead({ client_ip: '198.51.100.9' })));

    const page = await secretGet(server, '/leads');
    expect(page.body.leads.map((l: any) => [l.source === null, l.consent === null, l.captcha])).toEqual(
      expect.arrayContaining([
        [true, true, null],
        [false, false, 'passed'],
      ]),
    );
    check('/leads', 'get', page);
    check('/leads', 'get', await secretGet(server, '/leads?limit=abc'));
    check('/leads/{lead_number}', 'get', await secretGet(server, `/leads/${page.body.leads[0].lead_number}`));
    check('/leads/{lead_number}', 'get', await secretGet(server, '/leads/999999'));
    check('/leads/{request_id}/trace', 'get', await secretGet(server, `/leads/${full.request_id}/trace`));
    const trace = await secretGet(server, `/leads/${bare.request_id}/trace`);
    check('/leads/{request_id}/trace', 'get', trace);
    // The trace's schema is its real shape: a found trace without its lead, or with an ISO time, is not one.
    const traceSchema = schemaOf('/leads/{request_id}/trace', 'get', 200);
    expect(traceSchema({ found: true, key: bare.request_id })).toBe(false);
    expect(traceSchema({ ...trace.body, lead: { ...trace.body.lead, created_at: new Date(0).toISOString() } })).toBe(false);
    check('/leads/{request_id}/trace', 'get', await secretGet(server, '/leads/no-such-request/trace'));
    const plain = async (path: string) => {
      const res = await request(server.app.getHttpServer()).get(path);
      return { status: res.status, body: res.body };
    };
    check('/health', 'get', await plain('/health'));
    check('/ready', 'get', await plain('/ready'));
    check('/inbox/api/leads', 'get', await inboxCall(server, sandbox, 'leads'));
    check('/inbox/api/leads/{number}', 'get', await inboxCall(server, sandbox, 'leads/1'));
    check('/inbox/api/leads/{number}', 'get', await inboxCall(server, sandbox, 'leads/2'));

    // The wrong-secret lockout: five wrong secrets, then every route behind the secret answers 429 with Retry-After.
    const wrong = async (path: string, method = 'GET') => {
      const http = request(server.app.getHttpServer());
      const call = method === 'POST' ? http.post(path).send('{}') : http.get(path);
      const res = await call.set(SECRET_HEADER, `${SECRET}-wrong`).set('Content-Type', 'application/json');
      return { status: res.status, body: JSON.parse(res.text), retryAfter: res.headers['retry-after'] };
    };
    check('/leads', 'get', await wrong('/leads'));
    check('/leads', 'post', await wrong('/leads', 'POST'));
    for (let i = 0; i < 3; i++) await wrong('/leads');
    for (const [path, docPath, method] of [
      ['/leads', '/leads', 'get'],
      ['/leads/export.csv', '/leads/export.csv', 'get'],
      [`/leads/${bare.request_id}/trace`, '/leads/{request_id}/trace', 'get'],
      ['/leads', '/leads', 'post'],
    ]) {
      const answer = await wrong(path, method.toUpperCase());
      expect([path, answer.status, answer.retryAfter]).toEqual([path, 429, expect.stringMatching(/^[1-9]\d*$/)]);
      expect(doc.paths[docPath][method].responses['429'].headers['Retry-After']).toBeDefined();
      if (docPath !== '/leads/export.csv') check(docPath, method, answer);
      else expect(schemaOf(docPath, method, 429)(answer.body)).toBe(true);
    }

    expect(seen).toEqual(
      expect.arrayContaining([
        'post /leads 201',
        'post /leads 200',
        'post /leads 401',
        'post /leads 413',
        'post /leads 422',
        'post /leads 429',
        'get /leads 200',
        'get /leads/{lead_number} 200',
        'get /leads/{lead_number} 404',
        'get /leads/{request_id}/trace 200',
        'get /health 200',
        'get /ready 200',
        'get /inbox/api/leads 200',
        'get /inbox/api/leads/{number} 200',
      ]),
    );
  });

  it('every webhook body a receiver gets matches its schema under x-webhooks (a CRM status change, a text message), as does the inbox’s conversation', async () => {
    const receiver = new WebhookReceiver();
    await receiver.start();
    try {
      const env = { LEADS_WEBHOOK_URL: receiver.url, LEADS_WEBHOOK_SECRET: 'whsec_test_0123456789abcdef' };
      const server = await boot({ dbPath: join(tmp.dir, 'webhook-bodies.sqlite'), env, polling: true });
      const http = () => request(server.app.getHttpServer());
      const doc: any = (await http().get('/openapi.json')).body;
      const ajv = new Ajv({ strict: false, allErrors: true });
      addFormats(ajv);
      ajv.addSchema({ ...(toJsonSchema({ components: doc.components }) as object), $id: 'openapi.json' });
      const body = lead({ telegram: '@anna_k' }) as { request_id: string };
      const created = await postLead(server, body);
      const leadNumber = created.body.lead_number as number;
      await postLead(server, { ...body, request_id: randomUUID(), comment: 'Ещё раз' });
      const crm = await http()
        .post(`/leads/${leadNumber}/status`)
        .set(SECRET_HEADER, SECRET)
        .send({ from: 'new', to: 'in_progress', by: 'CRM: Мария' });
      expect(crm.status).toBe(200);
      // The visitor opens the lead's link and writes a text and a photo: lead.message with media null, then photo.
      sandbox.state.addChat({ id: VISITOR.id, type: 'private', title: VISITOR.first_name });
      const payload = /\?start=([A-Za-z0-9_-]+)$/.exec(String(created.body.telegram_link))![1];
      expect(await memberActions(sandbox).command(VISITOR.id, `/start ${payload}`, VISITOR)).toContain(`#${leadNumber}`);
      sandbox.say(VISITOR.id, 'Можно на 30 гостей?', VISITOR);
      sandbox.say(VISITOR.id, 'вот макет', VISITOR, undefined, { photo: true });
      await waitFor(
        async () => {
          await server.outbox.tick();
          return receiver.received.filter((r) => r.body.type === 'lead.message').length === 2;
        },
        10_000,
        'both messages announced',
      );

      const checked = receiver.received.map((r) => {
        const schema = doc['x-webhooks'][r.body.type].post.requestBody.content['application/json'].schema;
        const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi.json#/components/')));
        return [r.body.type, validate(r.body) ? null : validate.errors];
      });
      expect(checked).toEqual([
        ['lead.created', null],
        ['lead.repeat', null],
        ['lead.status_changed', null],
        ['lead.telegram_bound', null],
        ['lead.message', null],
        ['lead.message', null],
      ]);
      expect(receiver.received[2].body.data.by).toEqual({ telegram_user_id: null, name: 'CRM: Мария' });
      // Bound: the delivery's lead names the account; the event itself adds nothing.
      expect(receiver.received[3].body.data).toEqual({ lead: expect.objectContaining({ lead_number: leadNumber }) });
      expect(receiver.received[3].body.data.lead.telegram_account).toMatchObject({ id: VISITOR.id });
      expect(receiver.received.slice(4).map((r) => r.body.data.message.media)).toEqual([null, 'photo']);
      // The same two messages in the inbox's conversation.
      const conversation = await inboxCall(server, sandbox, `leads/${leadNumber}/messages`);
      const validate = validatorOf(doc)('/inbox/api/leads/{number}/messages', 'get', conversation.status);
      expect([
        conversation.body.messages.map((m: { media: string | null }) => m.media),
        validate(conversation.body) ? null : validate.errors,
      ]).toEqual([[null, 'photo'], null]);
    } finally {
      await receiver.stop();
    }
  });
});

describe('the request schema of POST /leads takes what the server takes', () => {
  it('null for every optional field (null counts as missing), and the body the server stores is valid against it', async () => {
    const server = await start({ dbPath: join(tmp.dir, 'request-nulls.sqlite') });
    const doc: any = (await request(server.app.getHttpServer()).get('/openapi.json')).body;
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...(toJsonSchema({ components: doc.components }) as object), $id: 'openapi.json' });
    const validate = ajv.getSchema('openapi.json#/components/schemas/LeadRequest')!;
    const optional = { date: null, guests: null, comment: null, client_ip: null, late: null, source: null, captcha: null, consent: null };
    const body = { ...lead(), ...optional };
    expect(validate(body) ? null : validate.errors).toBeNull();
    expect((await postLead(server, body)).status).toBe(201);
    // The key in the header instead (request_id null), null source keys, a late request without a fallback message.
    const submittedAt = new Date(server.clock.now() - 60_000).toISOString();
    const late = { submitted_at: submittedAt, route: 'lost', reason: 'network', fallback: null };
    const source = { landing: 'wedding', utm_source: null, referrer: null };
    const keyed = { ...lead({ telegram: '@keyed_by_header', phone: '+79990001177' }), request_id: null, late, source };
    expect(validate(keyed) ? null : validate.errors).toBeNull();
    const stored = await request(server.app.getHttpServer())
      .post('/leads')
      .set(SECRET_HEADER, SECRET)
      .set('Idempotency-Key', randomUUID())
      .send(keyed);
    expect(stored.status).toBe(201);
  });
});
