import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsISO8601, IsOptional, Matches, Max, Min } from 'class-validator';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../database/schema';

export const WEBHOOK_EVENTS_LIMIT_DEFAULT = 50;
export const WEBHOOK_EVENTS_LIMIT_MAX = 200;

export class WebhookEventsQuery {
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'must be an ISO 8601 date or time' })
  since?: string;

  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : value))
  @IsInt({ message: `must be a whole number from 1 to ${WEBHOOK_EVENTS_LIMIT_MAX}` })
  @Min(1, { message: `must be a whole number from 1 to ${WEBHOOK_EVENTS_LIMIT_MAX}` })
  @Max(WEBHOOK_EVENTS_LIMIT_MAX, { message: `must be a whole number from 1 to ${WEBHOOK_EVENTS_LIMIT_MAX}` })
  limit?: number;
}

/** `{id}`: an event's id as deliveries carry it. */
export class WebhookEventParams {
  @Matches(/^evt_[0-9a-f]{32}$/)
  id!: string;
}

@ApiSchema({ name: 'WebhookDeliveryState' })
export class WebhookDeliveryStateDto {
  @ApiProperty({ type: 'string', description: "The endpoint's origin (scheme, host, port): never its path or query" })
  endpoint!: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When it was delivered (null: not yet)' })
  delivered_at!: string | null;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Attempts of the newest delivery (a redelivery counts from 0)' })
  attempts!: number;

  @ApiProperty({ type: 'string', nullable: true, description: 'Why the last attempt failed (null: it did not, or none yet)' })
  last_error!: string | null;
}

@ApiSchema({ name: 'WebhookEventState' })
export class WebhookEventStateDto {
  @ApiProperty({ type: 'string', pattern: '^evt_[0-9a-f]{32}$' }) id!: string;
  @ApiProperty({ type: 'string', enum: [...WEBHOOK_EVENT_TYPES] }) type!: WebhookEventType;
  @ApiProperty({ type: 'integer', minimum: 1 }) lead_number!: number;
  @ApiProperty({ type: 'string', format: 'date-time', description: 'When the change happened' }) created_at!: string;
  @ApiProperty({ type: () => WebhookDeliveryStateDto, isArray: true }) deliveries!: WebhookDeliveryStateDto[];
}

@ApiSchema({ name: 'WebhookEventsPage' })
export class WebhookEventsPageDto {
  @ApiProperty({ type: () => WebhookEventStateDto, isArray: true, description: 'Newest first' }) events!: WebhookEventStateDto[];
}

@ApiSchema({ name: 'WebhookRedelivery' })
export class WebhookRedeliveryDto {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Deliveries queued: one per endpoint the event went to' })
  queued!: number;
}
