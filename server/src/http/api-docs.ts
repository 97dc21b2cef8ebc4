import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiResponse, ApiSecurity, getSchemaPath, type ReferenceObject, type SchemaObject } from '@nestjs/swagger';
import { API_ERRORS, MAX_BODY_BYTES, type RateLimitReason } from '@stickers/shared';

/** The OpenAPI pieces several routes share; the security schemes are defined in health/openapi.ts. */
export const LEADS_SECRET_SCHEME = 'leadsSecret';
export const INBOX_SCHEME = 'telegramMiniApp';

/** An object of `model`'s schema, or null: OpenAPI 3.0's `nullable` beside a `$ref` lets no null through. */
export const refOrNull = (model: () => unknown) => ({
  oneOf: [{ $ref: getSchemaPath(model() as never) }, { type: 'object', nullable: true, enum: [null] }],
});

export function apiErrorSchema(codes: readonly string[], extra: Record<string, SchemaObject> = {}, required = ['error']): SchemaObject {
  return { type: 'object', required, properties: { error: { type: 'string', enum: [...codes] }, ...extra } };
}

/** A refusal: its status, when, and its body `{"error": <one of codes>, …extra}`. */
export const ApiRefusal = (status: number, description: string, ...schema: Parameters<typeof apiErrorSchema>) =>
  ApiResponse({ status, description, ...jsonContent(apiErrorSchema(...schema)) });

/** JsonBody's 413: a body over MAX_BODY_BYTES, and the connection ends after the answer. */
export const ApiPayloadTooLarge = () =>
  ApiResponse({
    status: 413,
    description: `A body over ${MAX_BODY_BYTES} bytes`,
    headers: { Connection: { description: 'The connection ends after this answer', schema: { type: 'string', enum: ['close'] } } },
    ...jsonContent(apiErrorSchema([API_ERRORS.payloadTooLarge])),
  });

/** A JSON body of `type` (JsonBody: 16 KB at most), its 413, and its 422 `invalid_body`, refused `when`. */
export const ApiJsonBody = (type: new () => object, when: string) =>
  applyDecorators(
    ApiBody({ type }),
    ApiPayloadTooLarge(),
    ApiRefusal(422, when, ['invalid_body'], {
      errors: { type: 'object', description: 'Each bad field with why', additionalProperties: { type: 'string' } },
    }),
  );

/** A query's 422 `invalid_query`, naming every bad parameter. */
export const ApiInvalidQuery = () =>
  ApiRefusal(
    422,
    'A bad query parameter',
    ['invalid_query'],
    { errors: { type: 'object', description: 'Each bad parameter with why', additionalProperties: { type: 'string' } } },
    ['error', 'errors'],
  );

/** A response's JSON content, named explicitly: a bare `schema` would take the route's media type (the CSV's). */
export function jsonContent(schema: SchemaObject | ReferenceObject, example?: unknown) {
  return { content: { 'application/json': { schema, ...(example === undefined ? {} : { example }) } } };
}

/** A 429 `{"error":"rate_limited","why":…}` with `Retry-After`, for the reasons `whys`. */
export function ApiRateLimited(description: string, whys: readonly RateLimitReason[]): MethodDecorator & ClassDecorator {
  return ApiResponse({
    status: 429,
    description,
    headers: { 'Retry-After': { description: 'Seconds until the window has room again', schema: { type: 'integer', minimum: 1 } } },
    ...jsonContent(apiErrorSchema([API_ERRORS.rateLimited], { why: { type: 'string', enum: [...whys] } }, ['error', 'why'])),
  });
}

/** SecretGuard's answers and, with `throttled`, the throttle's 429 `flood`; a route's own answer for a status replaces these. */
export function ApiSecretRefusals(options: { throttled?: boolean } = {}): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiSecurity(LEADS_SECRET_SCHEME),
    ApiRefusal(401, 'Wrong or missing secret', [API_ERRORS.unauthorized]),
    ApiRefusal(404, 'Leads module switched off', [API_ERRORS.notFound]),
    options.throttled
      ? ApiRateLimited('Too many requests from this caller (flood: LEADS_THROTTLE_API), or the wrong-secret lockout', ['flood', 'secret'])
      : ApiRateLimited('Wrong-secret lockout: too many wrong secrets from this caller', ['secret']),
    ApiRefusal(503, 'The database cannot be read now (the lockout is kept there); retry later', [API_ERRORS.unavailable]),
  );
}
