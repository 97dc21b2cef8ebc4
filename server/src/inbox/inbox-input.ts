import { HttpException } from '@nestjs/common';
import { ApiValidationPipe } from '../http/validation';

/**
 * The inbox's refusals of its input, exactly as docs/api.md gives them, and the ValidationPipes that answer with them:
 * a `:number` that is not a lead number is 404 (no lead has it), a body its DTO refuses is 422 `invalid_body` naming
 * every bad field (inbox.dto.ts holds the rules).
 */
export const notFound = () => new HttpException({ error: 'not_found' }, 404);
export const invalidBody = (errors: Record<string, string>) => new HttpException({ error: 'invalid_body', errors }, 422);

/** `@Param(LEAD_NUMBER_PIPE) params: InboxLeadParams`. */
export const LEAD_NUMBER_PIPE = new ApiValidationPipe(() => notFound());
/** `@JsonBody(INBOX_BODY_PIPE) body: <its DTO>`: after the body is read (16 KB, a JSON object), its fields. */
export const INBOX_BODY_PIPE = new ApiValidationPipe(invalidBody);
