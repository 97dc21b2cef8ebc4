/**
 * The charts' words (the inbox's SVG, the digest's picture). Group-facing texts are Russian today; they are kept
 * together here so they move into the ru/en catalogues in one piece.
 */
export const CHART_TEXTS = {
  perDayTitle: (days: number) => `Заявки по дням за ${days} дней`,
  funnelTitle: (days: number) => `Заявки за ${days} дней по статусу сейчас`,
  ofSource: (source: string) => `источник ${source}`,
  noSource: 'без источника',
  total: (n: number) => `всего ${n}`,
  busiest: (n: number, day: string) => `больше всего ${n} — ${day}`,
  digestCaption: (days: number) => `📈 Заявки по дням за ${days} дней`,
} as const;
