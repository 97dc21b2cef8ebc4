import { createHmac } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { SERVER_CONFIG } from '../config/config.module';

/** What the hasher needs of the configuration: the server's secret salt (LEADS_IP_SALT). */
export interface ContactHashKey {
  leads: { ipSalt: string };
}

/** A submission's or an erased lead's contacts, as stored: `@Name` usernames (any case) and E.164 phones. */
export interface Contacts {
  telegrams: readonly (string | null | undefined)[];
  phones: readonly (string | null | undefined)[];
}

/**
 * The one place that turns a contact into the keyed hash `erased_contacts` holds (docs/decisions.md, "Erasure that
 * erases…"): HMAC-SHA256 keyed with LEADS_IP_SALT — the secret `ip_hash` is keyed with (access/visitor-hasher.ts) — of
 * the normalised contact in its own namespace, so that a hash of a phone is never an address's hash and is worthless
 * without the salt (a phone number has too few possibilities for a plain hash to hide it). Normalised: a username
 * lower-cased without `@` (`@Anna_K` and `anna_k` are one account), a phone exactly as the form stores it: E.164
 * (`+79165551234`, whichever way it was typed: `checkPhone`). Used by the erasure (to record) and by the submit decision (to
 * look a late replay's contacts up).
 */
@Injectable()
export class ContactHasher {
  constructor(@Inject(SERVER_CONFIG) private readonly key: ContactHashKey) {}

  /** For code without the app (the CLI): the hasher of this salt. */
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
