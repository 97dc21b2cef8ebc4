import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiProperty, ApiQuery, ApiSchema, type SchemaObject } from '@nestjs/swagger';
import { CAPTCHA_RESULTS, LEAD_FIELDS, SOURCE_KEYS, type CaptchaResult, type LeadField, type SourceKey } from '@stickers/shared';
import type { FormColumns } from '../domain/lead';
import type { TelegramAccount } from '../domain/telegram-account';
import { LEAD_STATUSES, type LeadStatus } from '../domain/lead-status';
import { refOrNull } from '../http/api-docs';
import { EXPORT_LIMIT_DEFAULT, EXPORT_LIMIT_MAX } from './export-query';

/** The OpenAPI words of the routes that read leads and their answers' shapes (their rules: export-query.ts). */

/** A time parameter as LeadsQueryPipe reads it (`Since`). */
export const queryTime = (what: string) => ({
  schema: { type: 'string' },
  description: `${what}: an ISO 8601 date or time, or milliseconds since the epoch`,
});

const QUERY_PARAMETERS = {
  source: { schema: { type: 'string' }, description: "The landing's source (source.landing); `none`: leads without a source" },
  q: {
    schema: { type: 'string', maxLength: 100 },
    description: 'A lead number (42, #42, №42), or a part of the name (any case), of the username or of the phone digits',
  },
  since: queryTime('Leads created at or after'),
  until: queryTime('Leads created before'),
  status: { schema: { type: 'string', enum: [...LEAD_STATUSES] } },
  updated_since: queryTime(
    "Leads whose state changed at or after (created, a status, a repeat, the card published, the visitor's Telegram account bound, " +
      "erased; each lead's updated_at), ordered by that change (oldest first), then by number: a lead that changes while " +
      'you page (or while the CSV streams) comes again, with its new state',
  ),
  limit: { schema: { type: 'integer', minimum: 1, maximum: EXPORT_LIMIT_MAX, default: EXPORT_LIMIT_DEFAULT } },
  cursor: { schema: { type: 'string' }, description: 'next_cursor of the previous page' },
} satisfies Record<string, { schema: SchemaObject; description?: string }>;

/** The route's query parameters, in this order, all optional. */
export const ApiQueryParameters = (...names: (keyof typeof QUERY_PARAMETERS)[]) =>
  applyDecorators(...names.map((name) => ApiQuery({ name, required: false, ...QUERY_PARAMETERS[name] })));

export const ApiCsvResponse = () => ApiOkResponse({ description: 'The CSV', content: { 'text/csv': { schema: { type: 'string' } } } });

const nullableString = { type: 'string', nullable: true } as const;
const nullableTime = { type: 'string', format: 'date-time', nullable: true } as const;

/** A lead's source: each of shared's SOURCE_KEYS, null when not sent. */
@ApiSchema({ name: 'ExportedLeadSource' })
class ExportedLeadSourceDto {}
for (const key of SOURCE_KEYS) ApiProperty(nullableString)(ExportedLeadSourceDto.prototype, key);

@ApiSchema({ name: 'ExportedLeadConsent' })
export class ExportedLeadConsentDto {
  @ApiProperty({ type: 'string', format: 'date-time', description: 'When the visitor sent the form with the consent box ticked' })
  accepted_at!: string;
  @ApiProperty({ type: 'string', format: 'uri', description: 'The privacy policy the form linked to (LANDING_PRIVACY_URL)' })
  policy_url!: string;
}

@ApiSchema({ name: 'ExportedLeadRepeat' })
export class ExportedLeadRepeatDto {
  @ApiProperty({ type: 'string', description: "The repeat's own request_id (as lead.repeat's data.repeat.request_id)" })
  request_id!: string;
  @ApiProperty({ type: 'string', format: 'date-time', description: 'When the visitor sent it' }) created_at!: string;
  @ApiProperty({ type: 'string', format: 'date-time', description: 'When it arrived' }) received_at!: string;
  @ApiProperty({
    type: 'object',
    properties: Object.fromEntries(LEAD_FIELDS.map((f) => [f, nullableString])),
    additionalProperties: false,
    description:
      'The form fields that differed from the lead, each with the value the repeat sent; null where it is personal and hidden (LEADS_CARD_PII=0 for the inbox) or erased with the lead',
  })
  changes!: Partial<Record<LeadField, string | null>>;
}

@ApiSchema({ name: 'ExportedTelegramAccount' })
export class ExportedTelegramAccountDto implements TelegramAccount {
  @ApiProperty({ type: 'integer', description: "The account's Telegram user id" }) id!: number;
  @ApiProperty(nullableString) username!: string | null;
  @ApiProperty(nullableString) first_name!: string | null;
  @ApiProperty(nullableString) last_name!: string | null;
}

@ApiExtraModels(ExportedLeadSourceDto, ExportedLeadConsentDto, ExportedLeadRepeatDto, ExportedTelegramAccountDto)
@ApiSchema({ name: 'ExportedLead', description: 'A lead; personal fields (and the source) are null once it is anonymised' })
export class ExportedLeadDto {
  @ApiProperty({ type: 'integer' }) lead_number!: number;
  @ApiProperty({ type: 'string' }) request_id!: string;
  @ApiProperty({ type: 'string', enum: [...LEAD_STATUSES] }) status!: LeadStatus;
  @ApiProperty(nullableString) status_changed_by!: string | null;
  @ApiProperty(nullableTime) status_changed_at!: string | null;
  @ApiProperty({ type: 'string', format: 'date-time' }) created_at!: string;
  @ApiProperty({ type: 'string', format: 'date-time' }) received_at!: string;
  @ApiProperty(nullableTime) published_at!: string | null;
  @ApiProperty(nullableTime) anonymised_at!: string | null;
  @ApiProperty({
    type: 'string',
    format: 'date-time',
    description:
      "When its state last changed: created (or received late), a status, a repeat, its card published, the visitor's Telegram " +
      'account bound, its erasure; each change moves it forward (by a millisecond at least). updated_since reads leads by it',
  })
  updated_at!: string;

  @ApiProperty({
    ...refOrNull(() => ExportedLeadSourceDto),
    description:
      "Where the lead came from (the landing's LANDING_SOURCE, the UTM parameters of its page, the referrer's host); null when the landing sent none",
  })
  source!: Record<SourceKey, string | null> | null;

  @ApiProperty({
    ...refOrNull(() => ExportedLeadConsentDto),
    description:
      "The visitor's consent to the processing of personal data; null when the request had none. Kept when the lead is anonymised",
  })
  consent!: ExportedLeadConsentDto | null;

  @ApiProperty({ type: 'integer', minimum: 0 }) repeats!: number;

  @ApiProperty({ type: () => ExportedLeadRepeatDto, isArray: true, description: 'Each repeat, oldest first (as many as repeats)' })
  repeat_history!: ExportedLeadRepeatDto[];

  @ApiProperty({
    type: 'string',
    // null listed in the enum too: OpenAPI 3.0's `nullable` does not add it to an enum.
    enum: [...CAPTCHA_RESULTS, null],
    nullable: true,
    description:
      "What came of the landing's captcha: passed; unchecked (its provider could not be reached, the lead was delivered anyway); null when the landing has no captcha",
  })
  captcha!: CaptchaResult | null;

  @ApiProperty({
    ...refOrNull(() => ExportedTelegramAccountDto),
    description:
      'The Telegram account the visitor bound by opening the lead\'s "Continue in Telegram" link (POST /leads telegram_link); ' +
      'null without one. Personal: null where personal fields are hidden and once the lead is anonymised',
  })
  telegram_account!: ExportedTelegramAccountDto | null;
}

// The lead's form fields (null once it is anonymised), in the order of shared's LEAD_FIELDS.
for (const field of LEAD_FIELDS) ApiProperty(nullableString)(ExportedLeadDto.prototype, field);

/** A lead as `GET /leads` shows it: ExportedLeadDto and every field of the form. */
export type ExportedLead = ExportedLeadDto & FormColumns;

@ApiSchema({ name: 'LeadAnswer' })
export class LeadAnswerDto {
  @ApiProperty({ type: () => ExportedLeadDto }) lead!: ExportedLead;
}

@ApiSchema({ name: 'LeadsPage' })
export class LeadsPageDto {
  @ApiProperty({ type: () => ExportedLeadDto, isArray: true })
  leads!: ExportedLead[];

  @ApiProperty({ type: 'string', nullable: true, description: 'Opaque; null on the last page' })
  next_cursor!: string | null;
}
