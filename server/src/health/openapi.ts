import { Injectable, type INestApplication } from '@nestjs/common';
import {
  DocumentBuilder,
  getSchemaPath,
  SwaggerModule,
  type OpenAPIObject,
  type ReferenceObject,
  type SchemaObject,
} from '@nestjs/swagger';
import { SECRET_HEADER } from '@stickers/shared';
import { INBOX_SCHEME, LEADS_SECRET_SCHEME } from '../http/api-docs';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../database/schema';
import { LEAD_STATUSES } from '../domain/lead-status';
import { MESSAGE_MEDIA } from '../domain/lead-message';
import { SIGNATURE_HEADER } from '../webhooks/webhook.sender';

/** An object of these properties, all required but the optional ones (OpenAPI 3.0 takes no empty `required`). */
export function objectSchema(
  properties: Record<string, SchemaObject | ReferenceObject>,
  optional: string[] = [],
  extra: SchemaObject = {},
): SchemaObject {
  const required = Object.keys(properties).filter((key) => !optional.includes(key));
  return { type: 'object', ...(required.length ? { required } : {}), properties, ...extra };
}

/** Each event type's `data`, besides `lead` (GET /leads's lead, as it is when the delivery is sent); every property required. */
const EVENT_DATA: Record<WebhookEventType, { when: string; properties: Record<string, SchemaObject> }> = {
  'lead.created': { when: 'A new lead is stored (a late one from the landing’s spool too)', properties: {} },
  'lead.repeat': {
    when: 'A repeat is attached to the lead',
    properties: {
      repeat: objectSchema({
        request_id: { type: 'string' },
        received_at: { type: 'string', format: 'date-time' },
        changed_fields: {
          type: 'array',
          items: { type: 'string' },
          description: 'The names of the fields that differ, never their values',
        },
      }),
    },
  },
  'lead.status_changed': {
    when: 'A card button, the inbox or a CRM (POST /leads/{lead_number}/status) changed the status',
    properties: {
      from: { type: 'string', enum: [...LEAD_STATUSES] },
      to: { type: 'string', enum: [...LEAD_STATUSES] },
      by: objectSchema({
        telegram_user_id: {
          type: 'integer',
          nullable: true,
          description: 'The Telegram user; null for a CRM (POST /leads/{lead_number}/status)',
        },
        name: { type: 'string', description: 'As on the card (a CRM: its `by`)' },
      }),
    },
  },
  'lead.anonymised': {
    when: 'The lead was erased: /stickers_forget by number or by contact, retention, or `npm run leads -- forget`',
    properties: { reason: { type: 'string', enum: ['number', 'contact', 'retention'] } },
  },
  'lead.telegram_bound': {
    when: "The visitor opened the lead's telegram_link in Telegram: the lead's telegram_account is that account now",
    properties: {},
  },
  'lead.message': {
    when: "A message of the lead's conversation in Telegram is stored: the visitor's to the team (`in`) or the team's to the visitor (`out`)",
    properties: {
      message: objectSchema({
        id: { type: 'integer', description: 'The message in the inbox (GET /inbox/api/leads/{number}/messages)' },
        direction: { type: 'string', enum: ['in', 'out'] },
        media: {
          type: 'string',
          nullable: true,
          // null listed in the enum too: OpenAPI 3.0's `nullable` does not add it to an enum.
          enum: [...MESSAGE_MEDIA, null],
          description: 'null: a text message. The text itself is personal data and never in a webhook',
        },
      }),
    },
  },
};

const schemaName = (type: WebhookEventType) => `WebhookEvent${type.replace(/(?:^|[._])(\w)/g, (_, c: string) => c.toUpperCase())}`;

/**
 * What the decorators cannot say: an operation without a scheme is public (`security: []`); the signed webhooks the server
 * POSTs, their bodies as component schemas, their deliveries under `x-webhooks` (OpenAPI 3.0 has no `webhooks`).
 */
function complete(document: OpenAPIObject): OpenAPIObject {
  for (const op of Object.values(document.paths).flatMap((item): unknown[] => Object.values(item))) {
    if (op && typeof op === 'object' && 'responses' in op && !('security' in op)) (op as { security?: unknown[] }).security = [];
  }
  const schemas = (document.components ??= {}).schemas ?? (document.components.schemas = {});
  const hooks: Record<string, unknown> = {};
  for (const type of WEBHOOK_EVENT_TYPES) {
    const data = EVENT_DATA[type];
    schemas[schemaName(type)] = objectSchema(
      {
        id: { type: 'string', description: 'The event: every delivery of it (a retry, a replay) has the same id' },
        type: { type: 'string', enum: [type] },
        created_at: { type: 'string', format: 'date-time', description: 'When the change happened (UTC)' },
        data: objectSchema({ lead: { $ref: getSchemaPath('ExportedLead') }, ...data.properties }),
      },
      [],
      { description: `${type}: ${data.when}` },
    );
    hooks[type] = {
      post: {
        operationId: `webhook${schemaName(type).slice('WebhookEvent'.length)}`,
        summary: `${type}: ${data.when}`,
        description:
          'POSTed to each LEADS_WEBHOOK_URL, at least once, in order per lead. Success is a 2xx within 10 s; anything else is ' +
          'retried (5 s, 15 s, 60 s, 5 min, then every 15 min). See docs/api.md, "Webhooks".',
        parameters: [
          { name: 'Stickers-Event-Id', in: 'header', required: true, schema: { type: 'string' }, description: 'The event’s id' },
          { name: 'Stickers-Event-Type', in: 'header', required: true, schema: { type: 'string', enum: [type] } },
          {
            name: SIGNATURE_HEADER,
            in: 'header',
            required: true,
            schema: { type: 'string', pattern: '^t=\\d+(,v1=[0-9a-f]{64})+$' },
            description:
              '`t=<unix seconds>,v1=<hex HMAC-SHA256(LEADS_WEBHOOK_SECRET, "<t>.<raw body>")>`: recompute over the exact bytes ' +
              'received, compare in constant time, refuse a t more than 5 minutes from your clock. During a secret rotation ' +
              '(LEADS_WEBHOOK_SECRET_PREVIOUS) a second v1 signs with the previous secret: accept when any v1 matches',
          },
        ],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: getSchemaPath(schemaName(type)) } } } },
        responses: { '2XX': { description: 'Delivered; any other answer (or none in 10 s) is retried' } },
      },
    };
  }
  (document as unknown as Record<string, unknown>)['x-webhooks'] = hooks;
  return document;
}

function documentFrame(): Omit<OpenAPIObject, 'paths'> {
  return new DocumentBuilder()
    .setTitle('Stickers Leads API')
    .setVersion('1')
    .setDescription('Stores a lead exactly once; its card reaches the Telegram group through the outbox. See docs/api.md.')
    .addTag('leads', "POST /leads and what integrators read back: the leads, their CSV, a request's trace; behind the shared secret")
    .addTag('operations', 'Liveness, readiness and metrics: public, no personal data')
    .addApiKey({ type: 'apiKey', in: 'header', name: SECRET_HEADER, description: 'The shared secret (LEADS_SECRET)' }, LEADS_SECRET_SCHEME)
    .addTag('inbox', "The inbox Mini App's API (/inbox/api/*): Telegram launch data in every call, no-store answers")
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: "`tma <initData>`: the Mini App's launch data as Telegram gives it, signed with the bot's token",
      },
      INBOX_SCHEME,
    )
    .addServer('/', 'This server: the paths are relative to where the document was fetched')
    .build();
}

/** `GET /openapi.json` from explicit decorators (no CLI plugin), built when first asked for (configureApp gives the app). */
@Injectable()
export class OpenApiDocument {
  private app: INestApplication | null = null;
  private document: OpenAPIObject | null = null;

  describe(app: INestApplication): void {
    this.app = app;
    this.document = null;
  }

  get(): OpenAPIObject {
    if (!this.app) throw new Error('no OpenAPI document: the app was not given to configureApp');
    return (this.document ??= complete(SwaggerModule.createDocument(this.app, documentFrame())));
  }
}
