import type { CardWords, PageTexts, Texts } from './texts';
import { en } from './texts-en';
import { ru } from './texts-ru';

/** The page's texts by language (the first part of a locale tag). */
const CATALOGUE: Record<string, PageTexts> = { ru, en };

/** The page's texts in `locale` (Russian unless it is English), with the server's card words once they are known. */
export function textsFor(locale: string | null | undefined, words?: CardWords): Texts {
  const lang = (locale ?? 'ru').toLowerCase().split(/[-_]/)[0];
  const base = CATALOGUE[lang] ?? ru;
  const statusLabel = words?.statuses ?? ({ new: 'new', in_progress: 'in_progress', won: 'won', lost: 'lost', spam: 'spam' } as const);
  const fields = words?.fields ?? {
    name: 'name',
    telegram: 'telegram',
    phone: 'phone',
    date: 'date',
    guests: 'guests',
    comment: 'comment',
  };
  const media = words?.media ?? {
    photo: 'photo',
    document: 'document',
    voice: 'voice',
    video: 'video',
    sticker: 'sticker',
    other: 'other',
  };
  return {
    ...base,
    media,
    fields: { ...fields, ...base.fields },
    statusLabel,
    statusButton: (from, to) => words?.buttons[from]?.[to] ?? statusLabel[to],
  };
}
