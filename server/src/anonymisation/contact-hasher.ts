import { createHmac } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SERVER_CONFIG } from '../config/config.module';

/** A submission's or an erased lead's contacts, as stored: `@Name` usernames (any case) and E.164 phones. */
interface Contacts {
  telegrams: readonly (string | null | undefined)[];
  phones: readonly (string | null | undefined)[];
}

/** `erased_contacts`' keyed hash: HMAC-SHA256 under LEADS_IP_SALT (a phone has too few values for a plain hash). */
@Injectable()
export class ContactHasher {
  constructor(@Inject(SERVER_CONFIG) private readonly key: { leads: { ipSalt: string } }) {}

  /** For the CLI, without the app. */
  static keyed(ipSalt: string): ContactHasher {
    return new ContactHasher({ leads: { ipSalt } });
  }

  telegram(username: string): string {
    return this.hash(`telegram:${username.trim().replace(/^@/, '').toLowerCase()}`);
  }

  phone(phone: string): string {
    return this.hash(`phone:${phone}`);
  }

  /** The hashes of every contact given (empty ones left out), each once. */
  hashes(contacts: Contacts): string[] {
    const all = [
      ...contacts.telegrams.filter((t): t is string => !!t).map((t) => this.telegram(t)),
      ...contacts.phones.filter((p): p is string => !!p).map((p) => this.phone(p)),
    ];
    return [...new Set(all)];
  }

  private hash(normalised: string): string {
    return createHmac('sha256', this.key.leads.ipSalt).update(`erased-contact:${normalised}`).digest('hex');
  }
}
