/**
 * CSV cells as exports write them (RFC 4180), one helper for every export
 * (the audit log's, the lists'). A spreadsheet runs a cell that starts with
 * = + - @ (or tab or CR, which some strip first) as a formula: a username
 * like `=HYPERLINK("http://…"&A2)` would be a link that leaks the
 * neighbouring cells. Such a cell is prefixed with a single quote (OWASP's
 * advice), which shows the text as text. A cell that itself starts with a
 * quote is prefixed too, so that a reader can strip exactly one quote and
 * get the bytes back (the audit export's verification does).
 */
export const formulaStart = /^[=+\-@\t\r']/;

function neutraliseFormulaCell(text: string): string {
  return formulaStart.test(text) ? `'${text}` : text;
}

/** One cell: null and undefined empty, objects as JSON, quoted when it holds a comma, a quote or a line break. */
export function csvCell(value: unknown): string {
  const text = neutraliseFormulaCell(
    value === null || value === undefined
      ? ""
      : value instanceof Date
        ? value.toISOString()
        : typeof value === "object"
          ? JSON.stringify(value)
          : String(value),
  );
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, its line break included. */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(",")}\n`;
}
