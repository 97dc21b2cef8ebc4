import type { LeadsRepository } from '../repositories/leads.repository';
import type { OutboxRepository } from '../repositories/outbox.repository';
import type { Transactor } from '../repositories/transactor';
import type { StoredWebhookEvent, WebhookEventsRepository } from '../repositories/webhook-events.repository';
import { endpointOrigin } from './webhook.sender';

/** What `webhooks replay` was given: an event's id (`evt_…`) or a lead number (`42`, `#42`). Null: neither. */
export function parseReplayKey(raw: string): { publicId: string } | { leadId: number } | null {
  const key = raw.trim();
  if (/^evt_[0-9a-f]{32}$/.test(key)) return { publicId: key };
  const number = /^#?(\d{1,15})$/.exec(key);
  return number && Number(number[1]) > 0 ? { leadId: Number(number[1]) } : null;
}

/** `webhooks replay` and the redelivery: the event, or every event of the lead, queued again to each endpoint it went to. */
export async function replayWebhooks(
  repo: WebhookEventsRepository,
  outbox: OutboxRepository,
  leadEvents: LeadsRepository,
  transactor: Transactor,
  key: { publicId: string } | { leadId: number },
  now: number,
): Promise<{ events: StoredWebhookEvent[]; deliveries: number }> {
  const events = await repo.findEvents(key);
  let deliveries = 0;
  await transactor.run(async (trx) => {
    for (const event of events) {
      for (const endpoint of event.endpoints) {
        await outbox.addDeliveries(event, [endpoint], now, trx, now);
        await leadEvents.recordEvent(
          event.lead_id,
          'webhook_replayed',
          now,
          `${event.type} ${event.public_id} to ${endpointOrigin(endpoint)} queued again`,
          null,
          trx,
        );
        deliveries += 1;
      }
    }
  });
  return { events, deliveries };
}
