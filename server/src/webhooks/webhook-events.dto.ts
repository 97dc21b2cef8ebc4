import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../database/schema';
import { Limit, QUERY_RULES, QueryParam, Since } from '../export/export-query';

export const EVENT_ID = /^evt_[0-9a-f]{32}$/;

/** `since` and `limit` as `GET /leads` reads them: an instant (epoch ms) and 1–200; `before`: an event's id, to page back. */
export class WebhookEventsQuery {
  @Since() since?: number;
  @QueryParam() @Matches(EVENT_ID, { message: QUERY_RULES.event }) before?: string;
  @Limit() limit?: number;
}

/** `{id}`: an event's id as deliveries carry it. */
export class WebhookEventParams {
  @Matches(EVENT_ID)
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
  @ApiProperty({ type: 'string', pattern: EVENT_ID.source }) id!: string;
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
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Deliveries queued: one per endpoint the event went to that LEADS_WEBHOOK_URL still lists',
  })
  queued!: number;
}
