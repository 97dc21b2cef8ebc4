/** A lead's statuses and the changes a manager may make (§5.1, §5.2); their words are the card's (cards/lead-statuses.ts). */
export const LEAD_STATUSES = ['new', 'in_progress', 'won', 'lost', 'spam'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

/** Why a status an API was given is refused (422). */
export const STATUS_RULE = `must be one of ${LEAD_STATUSES.join(', ')}`;

/** The statuses each status may change to, in the order its card offers them. */
export const LEAD_TRANSITIONS = {
  new: ['in_progress', 'spam'],
  in_progress: ['won', 'lost', 'spam'],
  won: ['in_progress'],
  lost: ['in_progress'],
  spam: ['new'],
} as const satisfies Record<LeadStatus, readonly LeadStatus[]>;

export type TransitionFrom<S extends LeadStatus> = (typeof LEAD_TRANSITIONS)[S][number];

export function isLeadStatus(value: string): value is LeadStatus {
  return (LEAD_STATUSES as readonly string[]).includes(value);
}

export function isTransition(from: LeadStatus, to: LeadStatus): boolean {
  return (LEAD_TRANSITIONS[from] as readonly LeadStatus[]).includes(to);
}
