import { checkPhone, checkTelegram, DEFAULT_PHONE_REGION, type PhoneRegion } from '@stickers/shared';
import { LeadsRepository } from '../repositories/leads.repository';
import { type AnonymiseResult, LeadErasureRepository } from '../repositories/lead-erasure.repository';
import { Transactor } from '../repositories/transactor';
import { ContactHasher } from './contact-hasher';

/** A person to erase: by phone (E.164, as the form stores it) or by username (lower-cased key). */
export type Contact = { kind: 'phone'; phone: string } | { kind: 'telegram'; telegram: string; key: string };

/** A phone as the form reads it (`8 916 555-12-34` in `region`, `+7…`) → the contact, or null. */
export function parsePhoneContact(raw: string, region: PhoneRegion = DEFAULT_PHONE_REGION): Contact | null {
  const phone = checkPhone(raw, region);
  return phone.ok && phone.value !== null ? { kind: 'phone', phone: phone.value } : null;
}

/** A phone (`+7 999…`, `8 916 555-12-34`) or a username (`@name`, `t.me/name`); digits alone are a lead number: null. */
export function parseContact(raw: string, region: PhoneRegion = DEFAULT_PHONE_REGION): Contact | null {
  const text = raw.trim();
  if (/^(@|(https?:\/\/)?(www\.)?(t|telegram)\.me\/)/i.test(text)) {
    const tg = checkTelegram(text);
    return tg.ok && tg.value !== null ? { kind: 'telegram', telegram: tg.value, key: tg.value.toLowerCase() } : null;
  }
  if (/^#?\d+$/.test(text)) return null;
  return parsePhoneContact(text, region);
}

/** Erases leads, each in its own commit with its event (and its contacts' hashes); for the app's service and the CLI. */
export class ContactEraser {
  constructor(
    private readonly leads: LeadErasureRepository,
    private readonly events: LeadsRepository,
    private readonly transactor: Transactor,
    private readonly hasher: ContactHasher,
  ) {}

  /** Every lead of that phone or username, and their repeats; the numbers erased, oldest first. */
  async erase(contact: Contact, now: number): Promise<number[]> {
    // The contact first: a submit committed before this is found below, one after it finds the erasure recorded.
    const asked = contact.kind === 'phone' ? this.hasher.phone(contact.phone) : this.hasher.telegram(contact.telegram);
    await this.transactor.run(async (trx) => {
      await this.leads.holdSubmits(trx);
      await this.leads.recordErased([asked], now, trx);
    });
    const ids = await this.leads.leadsOfContact({
      phone: contact.kind === 'phone' ? contact.phone : null,
      telegramKey: contact.kind === 'telegram' ? contact.key : null,
    });
    const erased: number[] = [];
    for (const id of ids) {
      const result = await this.eraseLead(id, now, { detail: 'personal fields erased (by contact)', record: true });
      if (result === 'done') erased.push(id);
    }
    return erased;
  }

  /** One lead erased with its event in one commit; `record`: its contacts' hashes kept against late replays (not for retention). */
  eraseLead(leadId: number, now: number, options: { detail: string; record: boolean }): Promise<AnonymiseResult> {
    return this.transactor.run(async (trx) => {
      if (options.record) {
        await this.leads.holdSubmits(trx);
        await this.leads.recordErased(this.hasher.hashes(await this.leads.contactsOf(leadId, trx)), now, trx);
      }
      const result = await this.leads.anonymise(leadId, now, trx);
      if (result === 'done') await this.events.recordEvent(leadId, 'anonymised', now, options.detail, null, trx);
      return result;
    });
  }
}
