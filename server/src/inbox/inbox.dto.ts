import { applyDecorators } from '@nestjs/common';
import { ApiParam, ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Equals, IsIn, IsString, ValidateBy } from 'class-validator';
import { MESSAGE_MEDIA } from '../domain/lead-message';
import { LEAD_STATUSES, STATUS_RULE, type LeadStatus } from '../domain/lead-status';
import { ExportedLeadDto, LeadsPageDto } from '../export/export.dto';
import { TELEGRAM_TEXT_MAX } from '../telegram/telegram.gateway';
import { ApiRefusal } from '../http/api-docs';

/** The inbox's API in the OpenAPI document, and its input's rules (run by http/validation.ts). Its queries are the export's. */

/** `:number`, and the 404 of a lead a viewer may not see, answered as one that does not exist. */
export const ApiLeadNumber = () =>
  applyDecorators(
    ApiParam({ name: 'number', schema: { type: 'integer', minimum: 1 } }),
    ApiRefusal(404, "No such lead, or none of the viewer's chats has it (LEADS_ROUTES)", ['not_found']),
  );

@ApiSchema({ name: 'InboxUser' })
class InboxUserDto {
  @ApiProperty({ type: 'integer' }) id!: number;
  @ApiProperty({ type: 'string' }) first_name!: string;
  @ApiProperty({ type: 'string', nullable: true }) last_name!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) username!: string | null;
}

@ApiSchema({ name: 'InboxMe' })
export class InboxMeDto {
  @ApiProperty({ type: () => InboxUserDto }) user!: InboxUserDto;
  @ApiProperty({ type: 'boolean', description: 'May erase (LEADS_MANAGER_IDS, else an administrator of the leads chat)' })
  manager!: boolean;
  @ApiProperty({
    type: 'boolean',
    description: 'May change a status and write to the visitor: everyone who may open the inbox, or only LEADS_MANAGER_IDS when set',
  })
  may_change!: boolean;
  @ApiProperty({ type: 'string', enum: ['ru', 'en'], description: 'LEADS_LOCALE: the language of the page' }) locale!: string;
  @ApiProperty({
    type: 'string',
    example: 'Europe/Moscow',
    description: "LEADS_TIMEZONE: the page's dates and times are in it, as the cards', the CSV's and the charts' are",
  })
  timezone!: string;
  @ApiProperty({ type: 'boolean', description: 'LEADS_CARD_PII: false when personal values are hidden' }) card_pii!: boolean;
  @ApiProperty({
    type: 'object',
    description:
      "The card's words in LEADS_LOCALE, as the cards show them: statuses (status → name), buttons (status now → status to " +
      'set → word), fields (a form field → its label) and media (a kind of media in a message → its name)',
    properties: {
      statuses: { type: 'object', additionalProperties: { type: 'string' } },
      buttons: { type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: 'string' } } },
      fields: { type: 'object', additionalProperties: { type: 'string' } },
      media: { type: 'object', additionalProperties: { type: 'string' } },
    },
    required: ['statuses', 'buttons', 'fields', 'media'],
  })
  words!: object;
}

@ApiSchema({ name: 'InboxLeadRepeat' })
class InboxRepeatDto {
  @ApiProperty({ type: 'string', format: 'date-time' }) at!: string;
}

@ApiSchema({ name: 'InboxStatusChange' })
class InboxHistoryDto {
  @ApiProperty({ type: 'string', enum: [...LEAD_STATUSES] }) status!: LeadStatus;
  @ApiProperty({ type: 'string', enum: [...LEAD_STATUSES] }) from!: LeadStatus;
  @ApiProperty({ type: 'string', description: "Who changed it (the Telegram user's name)" }) by!: string;
  @ApiProperty({ type: 'string', format: 'date-time' }) at!: string;
}

@ApiSchema({ name: 'InboxLeadEvent' })
class InboxEventDto {
  @ApiProperty({ type: 'string', format: 'date-time' }) at!: string;
  @ApiProperty({ type: 'string', description: 'published, publish_failed, repeat_notified, reminded, anonymised…' }) kind!: string;
  @ApiProperty({ type: 'string' }) text!: string;
}

@ApiSchema({ name: 'InboxLeadsPage' })
export class InboxLeadsPageDto extends LeadsPageDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer', minimum: 1 },
    description:
      "By lead number: the visitor's messages since the team's last one that did not fail in the lead's conversation, unless they sent /stop since (a lead with none is absent)",
  })
  waiting!: Record<string, number>;
}

@ApiSchema({ name: 'InboxLeadPage' })
export class InboxLeadPageDto {
  @ApiProperty({ type: () => ExportedLeadDto }) lead!: ExportedLeadDto;
  @ApiProperty({ type: () => InboxRepeatDto, isArray: true }) repeats!: InboxRepeatDto[];
  @ApiProperty({ type: () => InboxHistoryDto, isArray: true }) history!: InboxHistoryDto[];
  @ApiProperty({ type: () => InboxEventDto, isArray: true }) events!: InboxEventDto[];
  @ApiProperty({ type: 'string', nullable: true, description: 'The link to the card in the group (a supergroup or a public chat)' })
  card_url!: string | null;
}

@ApiSchema({ name: 'InboxLeadAnswer' })
export class InboxLeadAnswerDto {
  @ApiProperty({ type: () => ExportedLeadDto }) lead!: ExportedLeadDto;
}

@ApiSchema({ name: 'InboxStatusBody' })
export class InboxStatusBodyDto {
  @ApiProperty({ type: 'string', enum: [...LEAD_STATUSES], description: 'The status to set' })
  @IsIn([...LEAD_STATUSES], { message: STATUS_RULE })
  status!: LeadStatus;

  @ApiProperty({ type: 'string', enum: [...LEAD_STATUSES], description: 'The status shown (compare-and-set)' })
  @IsIn([...LEAD_STATUSES], { message: `${STATUS_RULE} (the status shown)` })
  expected!: LeadStatus;
}

@ApiSchema({ name: 'InboxEraseBody' })
export class InboxEraseBodyDto {
  @ApiProperty({ type: 'boolean', enum: [true] })
  @Equals(true, { message: 'must be true: erasure cannot be undone' })
  confirm!: true;
}

@ApiSchema({ name: 'InboxChartsSeries' })
class InboxChartsSeriesDto {
  @ApiProperty({ type: 'string', nullable: true, description: "The landing's source; null: leads without one" }) source!: string | null;
  @ApiProperty({ type: 'integer', isArray: true, description: 'Leads created each day, in the order of days' }) counts!: number[];
}

@ApiSchema({ name: 'InboxChartsFunnel' })
class InboxChartsFunnelDto {}
for (const status of LEAD_STATUSES) ApiProperty({ type: 'integer' })(InboxChartsFunnelDto.prototype, status);

@ApiSchema({ name: 'InboxChartsSvg' })
class InboxChartsSvgDto {
  @ApiProperty({ type: 'string', description: 'Stacked bars per day by source (<svg class="chart per-day" role="img">)' }) per_day!: string;
  @ApiProperty({ type: 'string', description: 'Horizontal bars per status (<svg class="chart funnel" role="img">)' }) funnel!: string;
}

@ApiSchema({ name: 'InboxCharts' })
export class InboxChartsDto {
  @ApiProperty({
    type: 'string',
    format: 'date',
    isArray: true,
    description: '30 local dates (LEADS_TIMEZONE), oldest first, ending today',
  })
  days!: string[];
  @ApiProperty({ type: () => InboxChartsSeriesDto, isArray: true, description: 'Per source, most leads first, none last' })
  per_day!: InboxChartsSeriesDto[];
  @ApiProperty({ type: () => InboxChartsFunnelDto, description: "The 30 days' leads by their status now" })
  funnel!: Record<LeadStatus, number>;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Median seconds from creation to the first status change' })
  median_first_change_s!: number | null;
  @ApiProperty({ type: () => InboxChartsSvgDto }) svg!: InboxChartsSvgDto;
}

export const TEXT_RULE = `1–${TELEGRAM_TEXT_MAX} UTF-16 units (as Telegram counts), not only spaces, no control character but tabs and line breaks`;
const TEXT_CHARACTERS = /^(?:[\t\n\r]|\P{Cc})*$/u;
/** What Telegram sends as a message's text (PostgreSQL refuses a NUL in any text, too). */
const isTelegramText = (v: unknown) => typeof v === 'string' && v.length <= TELEGRAM_TEXT_MAX && v.trim() !== '' && TEXT_CHARACTERS.test(v);

@ApiSchema({ name: 'InboxMessageBody' })
export class InboxMessageBodyDto {
  @ApiProperty({
    type: 'string',
    minLength: 1,
    maxLength: TELEGRAM_TEXT_MAX,
    description: `The text sent to the visitor: ${TEXT_RULE}`,
  })
  // class-validator checks the rules from the last written up: a number is told it is no string, not the text's rule.
  @ValidateBy({ name: 'telegramText', validator: { validate: isTelegramText } }, { message: TEXT_RULE })
  @IsString({ message: 'must be a string' })
  text!: string;
}

@ApiSchema({ name: 'InboxMessage' })
class InboxMessageDto {
  @ApiProperty({ type: 'integer' }) id!: number;
  @ApiProperty({ type: 'string', enum: ['in', 'out'], description: '`in`: from the visitor; `out`: from the team' }) direction!:
    'in' | 'out';
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: "Who wrote it: the visitor's name (null where LEADS_CARD_PII=0 hides it), or the member's",
  })
  author!: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'The text, or the caption of a media message' }) text!: string | null;
  @ApiProperty({ type: 'string', nullable: true, enum: [...MESSAGE_MEDIA, null], description: 'null: a text message' }) media!:
    string | null;
  @ApiProperty({ type: 'string', format: 'date-time' }) at!: string;
  @ApiProperty({ type: 'string', enum: ['queued', 'delivered', 'failed'] }) state!: 'queued' | 'delivered' | 'failed';
  @ApiProperty({ type: 'string', nullable: true, description: 'Why it failed' }) error!: string | null;
}

@ApiSchema({ name: 'InboxBoundVisitor' })
class InboxBoundVisitorDto {
  @ApiProperty({ type: 'string', nullable: true, description: 'Without @; null where LEADS_CARD_PII=0 hides it' }) username!: string | null;
  @ApiProperty({ type: 'string', description: 'The Telegram name; empty where LEADS_CARD_PII=0 hides it' }) name!: string;
}

@ApiSchema({ name: 'InboxMessages' })
export class InboxMessagesDto {
  @ApiProperty({ type: () => InboxMessageDto, isArray: true, description: 'Oldest first' }) messages!: InboxMessageDto[];
  @ApiProperty({
    type: () => InboxBoundVisitorDto,
    nullable: true,
    description: 'The visitor the bot writes to; null: none bound (never, stopped with /stop, or erased)',
  })
  bound!: InboxBoundVisitorDto | null;
  @ApiProperty({ type: 'boolean', description: 'The visitor sent /stop: the bot writes to them no more (bound is null)' })
  stopped!: boolean;
}

@ApiSchema({ name: 'InboxMessageAnswer' })
export class InboxMessageAnswerDto {
  @ApiProperty({ type: () => InboxMessageDto }) message!: InboxMessageDto;
}
