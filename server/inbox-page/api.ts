import type { CardField, CardWords } from './texts';
import type { LeadStatus } from '../src/domain/lead-status';

/** The shapes of `/inbox/api/*` (docs/api.md, the inbox's section). */
export interface Me {
  user: { id: number; first_name: string; last_name: string | null; username: string | null };
  manager: boolean;
  /** May change a status and write to the visitor (the buttons' rule: LEADS_MANAGER_IDS when set). */
  may_change: boolean;
  locale: string;
  /** LEADS_TIMEZONE: every date and time the page shows is its wall clock, as on the cards. */
  timezone: string;
  card_pii: boolean;
  /** The status names, the card buttons' words and the card's field labels in the server's locale. */
  words: CardWords;
}

export interface LeadSource {
  landing: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  utm_term: string | null;
  referrer: string | null;
}

export interface LeadItem {
  lead_number: number;
  request_id: string;
  status: LeadStatus;
  status_changed_by: string | null;
  status_changed_at: string | null;
  created_at: string;
  received_at: string | null;
  published_at: string | null;
  anonymised_at: string | null;
  name: string | null;
  telegram: string | null;
  phone: string | null;
  date: string | null;
  guests: string | number | null;
  comment: string | null;
  source: LeadSource | null;
  repeats: number;
  consent?: { accepted_at: string; policy_url: string | null } | null;
}

export interface LeadPage {
  leads: LeadItem[];
  next_cursor: string | null;
  /** By lead number: the visitor's messages the team has not answered yet (the inbox's list only). */
  waiting?: Record<string, number>;
}

export interface LeadDetail {
  lead: LeadItem;
  /** Oldest first: the fields that differ from the lead, each value null where it is hidden (LEADS_CARD_PII=0) or erased. */
  repeats: { at: string; changes: Partial<Record<CardField, string | null>> }[];
  history: { status: LeadStatus; by: string | null; at: string }[];
  events: { at: string; kind: string; text: string }[];
  card_url: string | null;
}

/** One message of a lead's conversation with the visitor through the bot: `in` from the visitor, `out` from the team. */
export interface ConversationMessage {
  id: number | string;
  direction: 'in' | 'out';
  author: string | null;
  text: string | null;
  /** What the message carries besides its text (`photo`, `document`…), or null. */
  media: string | null;
  at: string;
  state: 'queued' | 'delivered' | 'failed';
  error: string | null;
}

export interface Conversation {
  messages: ConversationMessage[];
  /** The visitor's Telegram account once they opened the bot's link; null: not yet, nothing can be sent. */
  bound: { username: string | null; name: string } | null;
  /** They sent `/stop`: nothing can be sent to them any more. */
  stopped: boolean;
}

export interface Charts {
  days: string[];
  per_day: { source: string | null; counts: number[] }[];
  funnel: Record<LeadStatus, number>;
  median_first_change_s: number | null;
  svg: { per_day: string; funnel: string };
}

/** The list's filters, as the query of `/inbox/api/leads` and `/inbox/api/leads.csv` (empty values left out). */
export interface Filters {
  q: string;
  status: string;
  source: string;
  since: string;
  until: string;
}

/** A refusal of the API: the status and its JSON body. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown> | null,
  ) {
    super(`inbox api answered ${status}`);
  }
}

/** The API, every call with `Authorization: tma <initData>` (the launch data as Telegram gave it). */
export class InboxApi {
  constructor(private readonly initData: string) {}

  private async call(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('Authorization', `tma ${this.initData}`);
    const res = await fetch(`/inbox/api/${path}`, { ...init, headers, cache: 'no-store' });
    if (!res.ok) {
      let body: Record<string, unknown> | null = null;
      try {
        body = (await res.json()) as Record<string, unknown>;
      } catch {
        /* not JSON */
      }
      throw new ApiFailure(res.status, body);
    }
    return res;
  }

  private async json<T>(path: string, init?: RequestInit): Promise<T> {
    return (await (await this.call(path, init)).json()) as T;
  }

  private post<T>(path: string, body: unknown): Promise<T> {
    return this.json<T>(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  }

  me(): Promise<Me> {
    return this.json('me');
  }

  leads(filters: Filters, cursor: string | null): Promise<LeadPage> {
    const query = filterQuery(filters);
    if (cursor) query.set('cursor', cursor);
    return this.json(`leads?${query.toString()}`);
  }

  lead(n: number): Promise<LeadDetail> {
    return this.json(`leads/${n}`);
  }

  setStatus(n: number, status: LeadStatus, expected: LeadStatus): Promise<{ lead: LeadItem }> {
    return this.post(`leads/${n}/status`, { status, expected });
  }

  conversation(n: number): Promise<Conversation> {
    return this.json(`leads/${n}/messages`);
  }

  /** 202 with the message as queued; 409 `not_bound` while the visitor has not opened the bot. */
  sendMessage(n: number, text: string): Promise<{ message: ConversationMessage }> {
    return this.post(`leads/${n}/messages`, { text });
  }

  erase(n: number): Promise<{ lead: LeadItem }> {
    return this.post(`leads/${n}/erase`, { confirm: true });
  }

  charts(source: string): Promise<Charts> {
    const query = new URLSearchParams();
    if (source) query.set('source', source);
    return this.json(`charts?${query.toString()}`);
  }

  /** The CSV of the filter, as a Blob (a plain link could not carry the Authorization header), and its file name. */
  async csv(filters: Filters): Promise<{ blob: Blob; name: string }> {
    const res = await this.call(`leads.csv?${filterQuery(filters).toString()}`);
    const disposition = res.headers.get('Content-Disposition') ?? '';
    const name = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? 'leads.csv';
    return { blob: await res.blob(), name };
  }
}

/**
 * The filters as a query; `until` is the day after the one chosen (the API's `until` is exclusive). The days start at
 * midnight in LEADS_TIMEZONE (a time without a zone), as the charts and the CSV count them; a date alone would be UTC's.
 */
export function filterQuery(filters: Filters): URLSearchParams {
  const query = new URLSearchParams();
  if (filters.q.trim()) query.set('q', filters.q.trim());
  if (filters.status) query.set('status', filters.status);
  if (filters.source) query.set('source', filters.source);
  if (filters.since) query.set('since', `${filters.since}T00:00`);
  if (filters.until) query.set('until', `${nextDay(filters.until)}T00:00`);
  return query;
}

function nextDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}
