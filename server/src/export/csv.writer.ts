/** RFC 4180 CSV for spreadsheets (issue 14): CRLF rows, quoted cells, formulas neutralised, a UTF-8 BOM first. */
export const CSV_BOM = '\uFEFF';
export const CRLF = '\r\n';

/**
 * A cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, or a tab or carriage return before one) gets a
 * leading `'`, so it is shown as text (OWASP's advice on CSV injection).
 */
export function neutralise(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/** One cell: quoted when it holds a comma, a quote, or a line break; quotes doubled. */
export function csvCell(value: string | number | null): string {
  if (value === null) return '';
  const text = typeof value === 'number' ? String(value) : neutralise(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(cells: readonly (string | number | null)[]): string {
  return cells.map(csvCell).join(',') + CRLF;
}
