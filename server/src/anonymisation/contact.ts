import { checkPhone, checkTelegram } from '@stickers/shared';
import { LeadEventsRepository } from '../repositories/lead-events.repository';
import { LeadsRepository } from '../repositories/leads.repository';
import { Transactor } from '../repositories/transactor';

/** A person to erase (issue 14): by phone (normalised as the form stores it) or by username (lower-cased key). */
export type Contact = { kind: 'phone'; phone: string } | { kind: 'telegram'; telegram: string; key: string };

/** `+7 999 123-45-67` → a phone; `@name`, `t.me/name` → a username; anything else → null. Through the form's normalisers. */
export function parseContact(raw: string): Contact | null {
  const text = raw.trim();
  if (text.startsWith('+')) {
    const phone = checkPhone(text);
    return phone.ok ? { kind: 'phone', phone: phone.value } : null;
  }
  if (/^(@|(https?:\/\/)?(www\.)?(t|telegram)\.me\/)/i.test(text)) {
    const tg = checkTelegram(text);
    return tg.ok ? { kind: 'telegram', telegram: tg.value, key: tg.value.toLowerCase() } : null;
  }
  return null;
}

/**
 * Erases every lead of a contact and every repeat of those leads, each lead in its own commit with its `anonymised`
 * event (as the anonymisation by number does). Used by the app's service and by the CLI on the same database file;
 * the caller does the truncating checkpoint and the card refresh. Returns the numbers of the leads erased.
 */
export class ContactEraser {
  constructor(
    private readonly leads: LeadsRepository,
    private readonly events: LeadEventsRepository,
    private readonly transactor: Transactor,
  ) {}

  async erase(contact: Contact, now: number): Promise<number[]> {
    const ids = await this.leads.leadsOfContact({
      phone: contact.kind === 'phone' ? contact.phone : null,
      telegramKey: contact.kind === 'telegram' ? contact.key : null,
    });
    const erased: number[] = [];
    for (const id of ids) {
      const result = await this.transactor.run(async (trx) => {
        const r = await this.leads.anonymise(id, now, trx);
        if (r === 'done') await this.events.record(id, 'anonymised', now, 'personal fields erased (by contact)', null, trx);
        return r;
      });
      if (result === 'done') erased.push(id);
    }
    return erased;
  }
}
