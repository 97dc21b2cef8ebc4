import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  ApiSchema,
  type ApiPropertyOptions,
  type ApiSchemaOptions,
  type SchemaObject,
} from '@nestjs/swagger';
import {
  API_ERRORS,
  CAPTCHA_RESULTS,
  checkConsent,
  CONSENT_FIELD,
  CONSENT_FUTURE_SKEW_MS,
  CONSENT_POLICY_URL_MAX,
  FALLBACK_SIG,
  FIELD_ERROR_CODES,
  IDEMPOTENCY_HEADER,
  LATE_FIELD,
  LATE_FUTURE_SKEW_MS,
  LATE_MAX_AGE_MS,
  LATE_REASON,
  LATE_ROUTES,
  OPTIONAL_FIELD_RULES,
  OPTIONAL_LEAD_FIELDS,
  NAME_MAX,
  NAME_MIN,
  REPORTED_FIELDS,
  SOURCE_FIELD,
  SOURCE_HOST_MAX,
  SOURCE_KEYS,
  SOURCE_VALUE_MAX,
  TELEGRAM_NAME_MAX,
  TELEGRAM_NAME_MIN,
  validateLate,
  validateSubmission,
  type CaptchaResult,
  type ConsentInfo,
  type FieldErrors,
  type LateInfo,
  type LeadAcceptedBody,
  type LeadSource,
  type LeadSubmission,
  type ReportedField,
  type SourceField,
} from '@stickers/shared';
import { type ArgumentMetadata, Inject, Injectable } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { Validate, ValidatorConstraint, type ValidationArguments, type ValidatorConstraintInterface } from 'class-validator';
import { Clock } from '../clock/clock';
import { DAY_MS } from '../clock/local-time';
import { SERVER_CONFIG } from '../config/config.module';
import type { ServerConfig } from '../config/config';
import { apiErrorSchema, refOrNull } from '../http/api-docs';
import { ApiError } from '../http/api-error';
import { ApiValidationPipe, validationContext } from '../http/validation';

/** `POST /leads`'s body and answers for the OpenAPI document, and the body's rules: shared's, asked by LeadFieldRule. */

/** `additionalProperties` is not in `@ApiSchema`'s type. */
const CLOSED = { additionalProperties: false } as unknown as ApiSchemaOptions;

const isoTime = (what: string): ApiPropertyOptions => ({
  type: 'string',
  format: 'date-time',
  description:
    `${what}: ISO 8601 with a time zone (\`2026-12-01T10:15:30.123Z\`), at most ${LATE_FUTURE_SKEW_MS / 3_600_000} hours ahead of ` +
    `the server's clock (a time ahead is taken as the server's now) and at most ${LATE_MAX_AGE_MS / DAY_MS} days old`,
});

const LATE_FALLBACK: ApiPropertyOptions = {
  type: 'object',
  additionalProperties: false,
  required: ['chat_id', 'message_id', 'sent_at'],
  nullable: true,
  description: 'The fallback message, only when Telegram accepted it (absent or null otherwise)',
  properties: {
    chat_id: { type: 'string', description: 'The chat Telegram put it in, as text: an integer (-1001234567890) or @name' },
    message_id: { type: 'integer', minimum: 1, description: "Telegram's message_id of the fallback message" },
    sent_at: isoTime('When Telegram accepted it'),
    sig: {
      type: 'string',
      pattern: FALLBACK_SIG.source,
      description:
        'The claim\'s signature: base64url (no padding) of HMAC-SHA256(SHA-256("stickers-leads fallback\\n" + bot token), ' +
        '"<request_id>\\n<chat_id>\\n<message_id>"). Without a valid one the claimed message is ignored (neither edited nor answered)',
    },
  },
};

const CONTACT_REQUIRED =
  'Required as LEADS_REQUIRED_CONTACTS says: both telegram and phone (the default), only this one, only the other, or any — at ' +
  'least one of the two (both missing: errors.telegram and errors.phone = required). A contact that is given is checked all the same';

const LATE_DESCRIPTION =
  "Only on a request the landing replays from its spool: the server could not take it when the visitor sent it. Such a lead keeps submitted_at as its time (the arrival is stored too), is matched for repeats from that time, is never refused by the per-visitor or hourly limit (it is still counted, at that time), and its fallback message, when it is in the leads group and the bot's own, becomes its card; otherwise the message gets the reply '✅ Заявка в базе: #<n>'. A known request_id still answers 200 (its fallback message, when none was known, is recorded and answered). Anything but this exact shape is 422 with errors.late = invalid.";

@ApiSchema({
  ...CLOSED,
  name: 'LeadSource',
  description:
    `Optional: where the lead came from. Known keys only, each a text of at most ${SOURCE_VALUE_MAX} characters after normalisation ` +
    `(the referrer a host of at most ${SOURCE_HOST_MAX}), without < or >; empty or null values are dropped. Shown on the card as ` +
    "'📣 <landing> · <utm_source> / <utm_medium> / <utm_campaign>', counted per source and campaign in /stickers_stats and the digest, " +
    `shown by the trace. Anything else is 422 with errors.${SOURCE_FIELD} = invalid.`,
})
class LeadSourceDto implements LeadSource {}
for (const key of SOURCE_KEYS) {
  const description =
    key === 'landing'
      ? "The landing's own name (LANDING_SOURCE, e.g. wedding)"
      : key === 'referrer'
        ? "The referrer's host only (yandex.ru)"
        : `${key} of the page URL`;
  ApiPropertyOptional({ type: 'string', nullable: true, maxLength: key === 'referrer' ? SOURCE_HOST_MAX : SOURCE_VALUE_MAX, description })(
    LeadSourceDto.prototype,
    key,
  );
}

@ApiSchema({
  name: 'LeadRequest',
  description:
    `Unknown fields are ignored. request_id is required (the ${IDEMPOTENCY_HEADER} header may carry it instead: it is ` +
    'used when request_id is absent, null or blank). Optional fields may be null, which counts as missing. telegram and ' +
    'phone are listed as required because both are by default: the required contacts follow LEADS_REQUIRED_CONTACTS (both, ' +
    'either one, or any one of the two). late only on a replay.',
})
@ApiExtraModels(LeadSourceDto)
export class LeadRequestDto {
  @ApiPropertyOptional({
    type: 'string',
    format: 'uuid',
    nullable: true,
    description: `UUID v4; the idempotency key: required unless the ${IDEMPOTENCY_HEADER} header carries it`,
  })
  request_id?: string;

  @ApiProperty({ type: 'string', minLength: NAME_MIN, maxLength: NAME_MAX })
  name!: string;

  @ApiProperty({
    type: 'string',
    description:
      `@name, name, t.me/name or https://t.me/name; ${TELEGRAM_NAME_MIN}–${TELEGRAM_NAME_MAX} of A-Za-z0-9_, starting with a letter. ` +
      CONTACT_REQUIRED,
  })
  telegram?: string;

  @ApiProperty({
    type: 'string',
    description:
      'As typed: international with + or 00 (+7 916 555-12-34), or national in LEADS_PHONE_REGION (RU: 8 916 555-12-34); ' +
      'digits with spaces, -, ( ), . between them; a valid number of its country. Stored as E.164 (+79165551234). ' +
      CONTACT_REQUIRED,
  })
  phone?: string;

  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'The visitor, IPv4 or IPv6; without it the caller is the visitor' })
  client_ip?: string;

  @ApiProperty({
    type: 'object',
    selfRequired: false,
    nullable: true,
    additionalProperties: false,
    required: ['submitted_at', 'route', 'reason'],
    description: LATE_DESCRIPTION,
    properties: {
      submitted_at: isoTime("When the landing first handled the visitor's request"),
      route: {
        type: 'string',
        enum: [...LATE_ROUTES],
        description: "The landing's route then: fallback (the fallback message went to Telegram) or lost (neither took it)",
      },
      reason: {
        type: 'string',
        pattern: LATE_REASON.source,
        description: 'Why the server did not take it then: its status (503, 401, 429 secret), timeout or network',
      },
      fallback: LATE_FALLBACK,
    },
  })
  late?: object;

  @ApiPropertyOptional(refOrNull(() => LeadSourceDto))
  source?: LeadSource;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    enum: [...CAPTCHA_RESULTS, null],
    description:
      "What came of the landing's captcha: passed (the provider confirmed the visitor's token), or unchecked (the provider " +
      "could not be reached; the lead is delivered anyway and its card says '⚠️ Капча не проверена'). Absent when the landing " +
      'has no captcha. Anything else is 422 with errors.captcha = invalid.',
  })
  captcha?: CaptchaResult;

  @ApiProperty({
    type: 'object',
    selfRequired: false,
    nullable: true,
    additionalProperties: false,
    required: ['accepted_at', 'policy_url'],
    description:
      "The visitor's consent to the processing of personal data: the landing adds it when the form's consent box (shown with " +
      'LANDING_PRIVACY_URL) was ticked. Stored with the lead (a repeat keeps its own, the lead its first), shown by GET /leads, ' +
      'the CSV and the trace, and kept when the lead is anonymised. Required with LEADS_REQUIRE_CONSENT=1 (missing: errors.consent = ' +
      'required); anything but this exact shape is 422 with errors.consent = invalid.',
    properties: {
      accepted_at: {
        type: 'string',
        format: 'date-time',
        description:
          `When the visitor sent the form with the box ticked: ISO 8601 with a time zone, at most ${CONSENT_FUTURE_SKEW_MS / 60_000} ` +
          `minutes ahead of the server's clock (on a replay, with late, as far ahead as late.submitted_at may be; a time ahead is ` +
          `taken as the server's now) and at most ${LATE_MAX_AGE_MS / DAY_MS} days old`,
      },
      policy_url: {
        type: 'string',
        format: 'uri',
        maxLength: CONSENT_POLICY_URL_MAX,
        description: 'The privacy policy the box linked to (LANDING_PRIVACY_URL): an http or https URL',
      },
    },
  })
  consent?: object;
}

// The optional free-text fields (date, guests, comment…) as shared's table of them says.
for (const field of OPTIONAL_LEAD_FIELDS) {
  ApiPropertyOptional({ type: 'string', nullable: true, maxLength: OPTIONAL_FIELD_RULES[field].max })(LeadRequestDto.prototype, field);
}

type SubmissionRules = Pick<ServerConfig['leads'], 'phoneRegion' | 'requiredContacts' | 'requireConsent'>;

/** A body that passed, as LeadsService takes it. */
export interface CheckedSubmission {
  lead: LeadSubmission;
  late: LateInfo | null;
  consent: ConsentInfo | null;
}

type SubmissionCheck = ({ ok: true } & CheckedSubmission) | { ok: false; errors: FieldErrors<ReportedField | SourceField> };

/** The body by shared's rules: the submission, or every refused field in the order its 422 names them. */
export function checkSubmission(body: Record<string, unknown>, rules: SubmissionRules, now: number): SubmissionCheck {
  const checked = validateSubmission(body, { phoneRegion: rules.phoneRegion, requiredContacts: rules.requiredContacts });
  const late = validateLate(body[LATE_FIELD], now);
  // A replay's consent was stamped by the landing's clock when the visitor sent it: it may be as far ahead as `late`.
  const consent = checkConsent(body[CONSENT_FIELD], now, { required: rules.requireConsent, late: body[LATE_FIELD] != null });
  if (checked.ok && late.ok && consent.ok) return { ok: true, lead: checked.value, late: late.value, consent: consent.value };
  return {
    ok: false,
    errors: {
      ...(checked.ok ? {} : checked.errors),
      ...(late.ok ? {} : { [LATE_FIELD]: 'invalid' }),
      ...(consent.ok ? {} : { [CONSENT_FIELD]: consent.code }),
    },
  };
}

type LeadRulesContext = { rules: SubmissionRules; clock: Clock };

/** Each body checked once for all of its fields (the first field's rule asks); LeadBodyPipe hands the result on. */
const checks = new WeakMap<object, SubmissionCheck>();

function refusalsOf(args: ValidationArguments): Record<string, string> {
  let found = checks.get(args.object);
  if (!found) {
    const context = validationContext<LeadRulesContext>(args);
    if (!context) throw new Error('the lead body rule needs its context (LeadBodyPipe)');
    found = checkSubmission(args.object as Record<string, unknown>, context.rules, context.clock.now());
    checks.set(args.object, found);
  }
  return found.ok ? {} : found.errors;
}

/** A field of the body as shared's rules take it; the reason is the rule's code (`required`, `too_short`, `invalid`…). */
@ValidatorConstraint({ name: 'leadField' })
export class LeadFieldRule implements ValidatorConstraintInterface {
  validate(_value: unknown, args: ValidationArguments): boolean {
    return !(args.property in refusalsOf(args));
  }

  defaultMessage(args: ValidationArguments): string {
    return refusalsOf(args)[args.property];
  }
}

// Every field a 422 may name, in the order it names them, as the body has it: class-transformer's copy of an object
// leaves out keys the prototype has (toString, valueOf), and shared refuses those as any unknown key. Keys no rule
// names are kept: shared ignores them.
for (const field of [...REPORTED_FIELDS, SOURCE_FIELD]) {
  Validate(LeadFieldRule)(LeadRequestDto.prototype, field);
  Transform(({ obj, key }) => (obj as Record<string, unknown>)[key])(LeadRequestDto.prototype, field);
}

/** `@LeadBody(LeadBodyPipe)`: the body's CheckedSubmission; else 422 `{"error":"invalid","errors":…}` in shared's order. */
@Injectable()
export class LeadBodyPipe extends ApiValidationPipe {
  constructor(@Inject(SERVER_CONFIG) config: ServerConfig, clock: Clock) {
    super(
      // Every refused field has LeadFieldRule, which refused it with shared's code: shared's errors are the answer.
      (_problems, errors) => {
        const refused = checks.get(errors[0]?.target ?? {});
        return new ApiError(422, { error: API_ERRORS.invalid, errors: refused && !refused.ok ? refused.errors : {} });
      },
      { rules: config.leads, clock } satisfies LeadRulesContext,
      { whitelist: false, validationError: { target: true } },
    );
  }

  override async transform(body: unknown, metadata: ArgumentMetadata): Promise<CheckedSubmission> {
    const dto = (await super.transform(body, { ...metadata, metatype: LeadRequestDto })) as object;
    const found = checks.get(dto);
    if (!found?.ok) throw new Error('a lead body passed LeadBodyPipe unchecked');
    return { lead: found.lead, late: found.late, consent: found.consent };
  }
}

@ApiSchema({ name: 'LeadAccepted' })
export class LeadAcceptedDto implements LeadAcceptedBody {
  @ApiProperty({ type: 'integer', minimum: 1 })
  lead_number!: number;

  @ApiProperty({ type: 'boolean' })
  duplicate!: boolean;

  @ApiProperty({ type: 'boolean' })
  repeat!: boolean;

  @ApiProperty({
    type: 'string',
    format: 'uri',
    nullable: true,
    maxLength: 120,
    description:
      '"Continue in Telegram": https://t.me/<bot username>?start=<payload>, which opens the bot; the visitor\'s /start binds ' +
      'their Telegram account to this lead (a duplicate and a repeat get a fresh link to the same lead). The payload is random ' +
      '([A-Za-z0-9_-], 32 characters), used once, valid for LEADS_TELEGRAM_LINK_DAYS days. Null without a bot, with ' +
      'LEADS_TELEGRAM_LINK_DAYS=0, for an erased lead (a duplicate of its request), or when the link could not be stored.',
  })
  telegram_link!: string | null;
}

const FIELD_ERRORS: SchemaObject = {
  type: 'object',
  description: 'Every failing field with its code',
  properties: Object.fromEntries(
    [...REPORTED_FIELDS, SOURCE_FIELD].map((field) => [field, { type: 'string', enum: [...FIELD_ERROR_CODES] }]),
  ),
  additionalProperties: false,
};

/** 422: fields rejected (`invalid` with `errors`), or the body is not a JSON object (`invalid_body`). */
export const LEAD_REFUSED_SCHEMA: SchemaObject = {
  oneOf: [apiErrorSchema([API_ERRORS.invalid], { errors: FIELD_ERRORS }, ['error', 'errors']), apiErrorSchema([API_ERRORS.invalidBody])],
};
