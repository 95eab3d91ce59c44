/** Aligned plain-text tables for benchmark output. */
export interface Column {
  header: string;
  /** numbers read best right-aligned; default: left */
  align?: 'left' | 'right';
}

export const formatTable = (columns: Column[], rows: string[][]): string => {
  const widths = columns.map((column, index) => Math.max(column.header.length, ...rows.map((row) => (row[index] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, index) => (columns[index]?.align === 'right' ? cell.padStart(widths[index]!) : cell.padEnd(widths[index]!)))
      .join(' | ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('-+-');
  return [line(columns.map((column) => column.header)), rule, ...rows.map(line)].join('\n');
};

/** A fixed-point number with thousands separators, e.g. 12,345 or 3.25. */
export const num = (value: number, decimals = 0): string =>
  Number.isFinite(value)
    ? value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals })
    : '-';
