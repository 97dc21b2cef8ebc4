import { Injectable, type INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { SECRET_HEADER } from '@stickers/shared';
import { INBOX_SCHEME, LEADS_SECRET_SCHEME } from '../http/api-docs';
import { describeWebhooks } from './webhooks.openapi';

/** What the document says about itself and the shared secret's scheme; the paths come from the routes. */
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

/** What the decorators cannot say: an operation without a scheme is public (`security: []`), and the webhooks sent. */
function complete(document: OpenAPIObject): OpenAPIObject {
  for (const item of Object.values(document.paths)) {
    for (const op of Object.values(item)) {
      if (op && typeof op === 'object' && 'responses' in op && !('security' in op)) (op as { security?: unknown[] }).security = [];
    }
  }
  describeWebhooks(document);
  return document;
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
