import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';
import { MESSAGE_MEDIA } from '../domain/lead-message';

/** Telegram's limit on a message's text. */
const MESSAGE_TEXT_MAX = 4096;

/** The conversation's routes (`/inbox/api/leads/:number/messages`) in the OpenAPI document, and the sent message's rules. */
@ApiSchema({ name: 'InboxMessageBody' })
export class InboxMessageBodyDto {
  @ApiProperty({ type: 'string', minLength: 1, maxLength: MESSAGE_TEXT_MAX, description: 'The text sent to the visitor' })
  @IsString({ message: 'must be a string' })
  @Length(1, MESSAGE_TEXT_MAX, { message: `must be 1–${MESSAGE_TEXT_MAX} characters` })
  text!: string;
}

@ApiSchema({ name: 'InboxMessage' })
export class InboxMessageDto {
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
  @ApiProperty({ type: 'string', nullable: true, enum: [...MESSAGE_MEDIA], description: 'null: a text message' }) media!: string | null;
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
}

@ApiSchema({ name: 'InboxMessageAnswer' })
export class InboxMessageAnswerDto {
  @ApiProperty({ type: () => InboxMessageDto }) message!: InboxMessageDto;
}
