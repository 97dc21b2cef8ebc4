/**
 * `GET /openapi.json`: the document @nestjs/swagger generates from the routes' decorators, fetched from a real app
 * over HTTP, is valid OpenAPI (checked by @seriousme/openapi-schema-validator against its version's JSON Schema, with
 * every $ref resolved), and lists every route with every answer, their bodies and headers, and the enumerations of
 * the code.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import {
  API_ERRORS,
  CAPTCHA_RESULTS,
  FIELD_ERROR_CODES,
  LATE_ROUTES,
  RATE_LIMIT_REASONS,
  REPORTED_FIELDS,
  SECRET_HEADER,
  SOURCE_KEYS,
} from '@stickers/shared';
import { LEAD_STATUSES } from '../src/domain/lead-status';
import { OpenApiDocument } from '../src/health/openapi';
import request from 'supertest';
import { freePort, sandboxSuite, waitFor, type TestServer } from './harness';

const { tmp, sandbox, start } = sandboxSuite();
let n = 0;

/** The validator is ESM only and Jest runs CommonJS: it runs in Node, on the document's text. */
function validate(text: string): { valid: boolean; version: string; errors: unknown } {
  const run = spawnSync(process.execPath, [join(__dirname, 'support', 'openapi-validate.mjs')], { input: text, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openapi-validate.mjs failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

async function fetchDocument(server: TestServer) {
  const res = await request(server.app.getHttpServer()).get('/openapi.json');
  return { res, text: res.text, doc: JSON.parse(res.text) };
}

/** Every operation as `METHOD path` with its answers' statuses, sorted. */
function operations(doc: any): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, Object.keys(op.responses).sort()]),
    ),
  );
}

const EXPECTED_OPERATIONS = {
  'POST /leads': ['200', '201', '401', '404', '413', '422', '429', '503'],
  'GET /leads': ['200', '401', '404', '422', '429', '503'],
  'GET /leads/export.csv': ['200', '401', '404', '422', '429', '503'],
  'GET /leads/{lead_number}': ['200', '401', '404', '429', '503'],
  'GET /leads/{request_id}/trace': ['200', '401', '404', '429', '503'],
  'POST /leads/{lead_number}/status': ['200', '401', '404', '409', '413', '422', '429', '503'],
  'GET /webhooks/events': ['200', '401', '404', '422', '429', '503'],
  'POST /webhooks/events/{id}/redeliver': ['202', '401', '404', '429', '503'],
  'GET /health': ['200'],
  'GET /ready': ['200', '503'],
  'GET /metrics': ['200'],
  'GET /inbox/api/me': ['200', '401', '403', '429', '503'],
  'GET /inbox/api/leads': ['200', '401', '403', '422', '429', '503'],
  'GET /inbox/api/leads.csv': ['200', '401', '403', '422', '429', '503'],
  'GET /inbox/api/leads/{number}': ['200', '401', '403', '404', '429', '503'],
  'GET /inbox/api/charts': ['200', '401', '403', '422', '429', '503'],
  'POST /inbox/api/leads/{number}/status': ['200', '401', '403', '404', '409', '413', '422', '429', '503'],
  'POST /inbox/api/leads/{number}/erase': ['200', '401', '403', '404', '413', '422', '429', '503'],
  'GET /inbox/api/leads/{number}/messages': ['200', '401', '403', '404', '429', '503'],
  'POST /inbox/api/leads/{number}/messages': ['202', '401', '403', '404', '409', '413', '422', '429', '503'],
};

const json = (response: any) => response.content['application/json'].schema;

describe('GET /openapi.json', () => {
  it('is valid OpenAPI 3 and lists every route with every answer, generated from the decorators', async () => {
    const server = await start({ dbPath: join(tmp.dir, `openapi-${++n}.sqlite`) });
    const { res, text, doc } = await fetchDocument(server);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(validate(text)).toEqual({ valid: true, version: '3.0', errors: null });
    expect(doc.info.title).toBe('Stickers Leads API');

    expect(operations(doc)).toEqual(EXPECTED_OPERATIONS);
    expect(Object.values(doc.paths).flatMap((ops: any) => Object.values(ops).map((op: any) => op.operationId))).toEqual(
      expect.arrayContaining(['submitLead', 'listLeads', 'exportLeadsCsv', 'traceLead']),
    );

    // Paths relative to where the document was fetched (no empty servers list).
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);

    // The secret: an apiKey scheme in its header, on the routes behind it; the ops doors say they are public.
    expect(doc.components.securitySchemes.leadsSecret).toMatchObject({ type: 'apiKey', in: 'header', name: SECRET_HEADER });
    for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const op of Object.values(ops)) {
        const security =
          path.startsWith('/leads') || path.startsWith('/webhooks/')
            ? [{ leadsSecret: [] }]
            : path.startsWith('/inbox/api/')
              ? [{ telegramMiniApp: [] }]
              : [];
        expect([path, op.security]).toEqual([path, security]);
      }
    }

    // The inbox's list and CSV name what their query takes (no updated_since: the integrators' sync is GET /leads's).
    const names = (op: any) => op.parameters.map((p: any) => p.name);
    expect(names(doc.paths['/inbox/api/leads'].get)).toEqual(['source', 'q', 'since', 'until', 'status', 'limit', 'cursor']);
    expect(names(doc.paths['/inbox/api/leads.csv'].get)).toEqual(['source', 'q', 'since', 'until', 'status']);

    // The inbox's charts: their numbers and SVGs, the source filter.
    const charts = doc.paths['/inbox/api/charts'].get;
    expect(json(charts.responses['200'])).toEqual({ $ref: '#/components/schemas/InboxCharts' });
    expect(charts.parameters).toEqual([expect.objectContaining({ name: 'source', in: 'query', required: false })]);
    expect(doc.components.schemas.InboxCharts.required).toEqual(['days', 'per_day', 'funnel', 'median_first_change_s', 'svg']);
    expect(Object.keys(doc.components.schemas.InboxChartsFunnel.properties)).toEqual([...LEAD_STATUSES]);

    // POST /leads: the body with the optional late and source objects, every answer's body and headers.
    const post = doc.paths['/leads'].post;
    expect(post.requestBody.required).toBe(true);
    expect(json(post.requestBody)).toEqual({ $ref: '#/components/schemas/LeadRequest' });
    expect(post.parameters).toEqual([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false })]);
    const request = doc.components.schemas.LeadRequest;
    // request_id and both contacts, as by default; the description says the contacts follow LEADS_REQUIRED_CONTACTS.
    expect(request.required).toEqual(['name', 'telegram', 'phone']);
    expect(request.description).toContain('LEADS_REQUIRED_CONTACTS');
    expect(request.properties.consent.required).toEqual(['accepted_at', 'policy_url']);
    expect(request.properties.consent.additionalProperties).toBe(false);
    expect(doc.components.schemas.ExportedLead.properties.consent.oneOf).toEqual([
      { $ref: '#/components/schemas/ExportedLeadConsent' },
      { type: 'object', nullable: true, enum: [null] },
    ]);
    expect(request.properties.late.required).toEqual(['submitted_at', 'route', 'reason']);
    expect(request.properties.late.properties.route.enum).toEqual([...LATE_ROUTES]);
    expect(request.properties.source).toEqual({
      oneOf: [{ $ref: '#/components/schemas/LeadSource' }, { type: 'object', nullable: true, enum: [null] }],
    });
    expect(Object.keys(doc.components.schemas.LeadSource.properties)).toEqual([...SOURCE_KEYS]);
    expect(doc.components.schemas.LeadSource.additionalProperties).toBe(false);
    expect(request.properties.captcha).toMatchObject({ type: 'string', nullable: true, enum: [...CAPTCHA_RESULTS, null] });
    expect(request.required).not.toContain('captcha');
    for (const status of ['200', '201']) {
      expect(json(post.responses[status])).toEqual({ $ref: '#/components/schemas/LeadAccepted' });
      expect(post.responses[status].content['application/json'].example).toMatchObject({ lead_number: 42 });
    }
    const errorOf = (status: string) => json(post.responses[status]).properties.error.enum;
    expect(errorOf('401')).toEqual([API_ERRORS.unauthorized]);
    expect(errorOf('404')).toEqual([API_ERRORS.notFound]);
    expect(errorOf('413')).toEqual([API_ERRORS.payloadTooLarge]);
    expect(errorOf('503')).toEqual([API_ERRORS.unavailable]);
    // Every JSON body's 413 ends the connection (JsonBody), and says so.
    const tooLarge = Object.values(doc.paths as Record<string, Record<string, any>>).flatMap((ops) =>
      Object.values(ops).flatMap((op) => (op.responses?.['413'] ? [op.responses['413']] : [])),
    );
    expect(tooLarge.length).toBeGreaterThanOrEqual(5);
    for (const answer of tooLarge) expect(answer.headers.Connection.schema).toEqual({ type: 'string', enum: ['close'] });
    const [invalid, invalidBody] = json(post.responses['422']).oneOf;
    expect(invalid.properties.error.enum).toEqual([API_ERRORS.invalid]);
    expect(Object.keys(invalid.properties.errors.properties)).toEqual([...REPORTED_FIELDS, 'source']);
    expect(invalid.properties.errors.properties.name.enum).toEqual([...FIELD_ERROR_CODES]);
    expect(invalidBody.properties.error.enum).toEqual([API_ERRORS.invalidBody]);
    expect(post.responses['429'].headers['Retry-After'].schema).toEqual({ type: 'integer', minimum: 1 });
    expect(json(post.responses['429']).properties.why.enum).toEqual([...RATE_LIMIT_REASONS]);

    // The export and the trace: their parameters, the statuses from the code.
    const list = doc.paths['/leads'].get;
    expect(list.parameters.find((p: any) => p.name === 'status').schema.enum).toEqual([...LEAD_STATUSES]);
    expect(json(list.responses['200'])).toEqual({ $ref: '#/components/schemas/LeadsPage' });
    expect(doc.components.schemas.ExportedLead.properties.status.enum).toEqual([...LEAD_STATUSES]);
    expect(doc.components.schemas.ExportedLead.properties.captcha).toMatchObject({ enum: [...CAPTCHA_RESULTS, null], nullable: true });
    // Each order as docs/api.md gives it: by number (no lead twice), or by change with updated_since (a lead again).
    expect(list.summary).toBe('Leads, newest first by number (with updated_since: oldest change first), a page at a time');
    expect(list.description).toContain('With updated_since: a lead that changes while you page comes again with its new state.');
    expect(list.parameters.find((p: any) => p.name === 'updated_since').description).toContain(
      'a lead that changes while you page (or while the CSV streams) comes again',
    );
    for (const path of ['/leads', '/leads/export.csv', '/leads/{request_id}/trace']) {
      const tooMany = doc.paths[path].get.responses['429'];
      expect([path, Object.keys(tooMany.headers), json(tooMany).properties.why.enum]).toEqual([path, ['Retry-After'], ['flood', 'secret']]);
    }

    // The webhooks the server sends: one per event type under x-webhooks (OpenAPI 3.0 has no webhooks field), signed.
    expect(Object.keys(doc['x-webhooks'])).toEqual([
      'lead.created',
      'lead.repeat',
      'lead.status_changed',
      'lead.anonymised',
      'lead.telegram_bound',
      'lead.message',
    ]);
    const statusHook = doc['x-webhooks']['lead.status_changed'].post;
    expect(statusHook.parameters.map((p: any) => p.name)).toEqual(['Stickers-Event-Id', 'Stickers-Event-Type', 'Stickers-Signature']);
    expect(json(statusHook.requestBody)).toEqual({ $ref: '#/components/schemas/WebhookEventLeadStatusChanged' });
    expect(doc.components.schemas.WebhookEventLeadStatusChanged.properties.data.required).toEqual(['lead', 'from', 'to', 'by']);
    expect(doc.components.schemas.ExportedLead.required).toContain('captcha');
    expect(Object.keys(doc.paths['/leads/export.csv'].get.responses['200'].content)).toEqual(['text/csv']);
    expect(doc.paths['/leads/{request_id}/trace'].get.parameters).toEqual([
      expect.objectContaining({ name: 'request_id', in: 'path', required: true }),
    ]);

    // Ops doors.
    expect(json(doc.paths['/ready'].get.responses['503']).properties.status.enum).toEqual(['ready', 'not_ready']);
    expect(Object.keys(doc.paths['/metrics'].get.responses['200'].content)).toEqual(['text/plain']);

    // Built once per app: a request reads the kept document.
    const kept = server.app.get(OpenApiDocument);
    expect(kept.get()).toBe(kept.get());
    expect((await fetchDocument(server)).text).toBe(text);
  });

  it('leaves the Telegram webhook route out, and is the same document for another app', async () => {
    const port = await freePort();
    const server = await start({
      dbPath: join(tmp.dir, `openapi-${++n}.sqlite`),
      port,
      polling: true,
      env: { TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/telegram/webhook`, TELEGRAM_WEBHOOK_SECRET: 'webhook-secret-0123456789_abc' },
    });
    await waitFor(() => sandbox.state.webhook, 5000, 'setWebhook');
    const { text, doc } = await fetchDocument(server);
    expect(operations(doc)).toEqual(EXPECTED_OPERATIONS);
    expect(text).not.toContain('/telegram/webhook');
  });
});
