import { Readable } from 'node:stream';
import { StreamableFile } from '@nestjs/common';

/** RFC 4180 CSV for spreadsheets: CRLF rows, quoted cells, formulas neutralised, a UTF-8 BOM first. */
export const CSV_BOM = '\uFEFF';
export const CRLF = '\r\n';

/**
 * OWASP's list for CSV injection (what a spreadsheet runs as a formula when a cell starts with it), and `'` itself, so
 * that a reader who drops one `'` at those places gets every value back: `'=1` is written `''=1`, `=1` is `'=1`.
 */
const FORMULA_START = /^[=+\-@\t\r']/;
/** A separator some reader splits at (`,`, ru-RU Excel's `;`, a tab, a line break), spaces, quotes, then a formula character. */
const FORMULA_AFTER_SEPARATOR = /([,;\t\r\n][ \t]*)("*)(?=[=+\-@\t\r'])/g;

/** A `'` wherever a spreadsheet would start a formula, at the start or after a separator: `Ann;=1+1` is `Ann;'=1+1`. */
export function neutralise(value: string): string {
  const inside = value.replace(FORMULA_AFTER_SEPARATOR, "$1'$2");
  return FORMULA_START.test(inside) ? `'${inside}` : inside;
}

/** One cell: quoted (quotes doubled) when it holds a separator (`;` too: a Russian Excel's), a quote or a line break. */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  const text = typeof value === 'number' ? String(value) : neutralise(value);
  return /[",;\t\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(cells: readonly (string | number | null)[]): string {
  return cells.map(csvCell).join(',') + CRLF;
}

export const csvDownload = (rows: AsyncIterable<string>) =>
  new StreamableFile(Readable.from(rows), { type: 'text/csv; charset=utf-8', disposition: 'attachment; filename="leads.csv"' });
