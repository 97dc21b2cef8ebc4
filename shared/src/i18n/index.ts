import { en } from './en.js';
import type { FieldMessages } from './field-messages.js';
import type { Locale } from './locale.js';
import { ru } from './ru.js';

export * from './locale.js';
export type { FieldMessages } from './field-messages.js';

/** The field texts of each locale. */
export const FIELD_MESSAGES: Record<Locale, FieldMessages> = { ru, en };
