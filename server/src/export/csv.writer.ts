import { Readable } from 'node:stream';
import { StreamableFile } from '@nestjs/common';

/** RFC 4180 CSV for spreadsheets: CRLF rows, quoted cells, formulas neutralised, a UTF-8 BOM first. */
export const CSV_BOM = '\uFEFF';
export const CRLF = '\r\n';

/** What a spreadsheet runs as a formula when a cell starts with it (OWASP's list for CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;
/**
 * A separator some reader may split at (`,`, the `;` of Excel in ru-RU, a tab, a line break), then spaces (trimmed
 * off the cell) and quotes, then a formula character: a cell of that reader would start there.
 */
const FORMULA_AFTER_SEPARATOR = /([,;\t\r\n][ \t]*)("*)(?=[=+\-@\t\r])/g;

/**
 * A leading `'` where a spreadsheet would run a formula, so it shows text: at the cell's start and wherever a reader
 * splitting at `;` (or a tab, or a line break) would start a cell with one: `Ann;=1+1` is written `Ann;'=1+1`.
 */
export function neutralise(value: string): string {
  const inside = value.replace(FORMULA_AFTER_SEPARATOR, "$1'$2");
  return FORMULA_START.test(inside) ? `'${inside}` : inside;
}

/** One cell: quoted (quotes doubled) when it holds a comma, a `;` (a Russian Excel's separator), a tab, a quote, a line break. */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  const text = typeof value === 'number' ? String(value) : neutralise(value);
  return /[",;\t\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(cells: readonly (string | number | null)[]): string {
  return cells.map(csvCell).join(',') + CRLF;
}

/** The CSV as the routes answer it: a `leads.csv` download, streamed. */
export const csvDownload = (rows: AsyncIterable<string>) =>
  new StreamableFile(Readable.from(rows), { type: 'text/csv; charset=utf-8', disposition: 'attachment; filename="leads.csv"' });
