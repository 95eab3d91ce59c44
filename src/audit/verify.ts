import { parseCsvRecord } from './csv.js';
import { CSV_COLUMNS, GENESIS_HASH, lineHash, toCsv, toNdjson, type ExportLine } from './export-line.js';

export type VerifyResult =
  | { ok: true; count: number; lastHash: string; format: 'ndjson' | 'csv' }
  /** `line`: 1-based line number in the file (a CSV file's header is line 1) */
  | { ok: false; line: number; reason: string };

export interface VerifyOptions {
  /** the prevHash the first line must carry: 64 zeros, or the last hash of the export this one continues */
  firstPrevHash?: string;
}

const HEX_64 = /^[0-9a-f]{64}$/;
const DECIMAL = /^(0|[1-9][0-9]*)$/;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The line's fields, or why it is not an export line. */
const shapeOf = (value: unknown): ExportLine | string => {
  if (!isObject(value)) return 'not a JSON object';
  const keys = Object.keys(value).sort().join(',');
  if (keys !== [...CSV_COLUMNS].sort().join(',')) return `fields are ${keys}, expected ${CSV_COLUMNS.join(',')}`;
  const { position, stream, revision, type, data, metadata, prevHash, hash } = value;
  if (typeof position !== 'string' || !DECIMAL.test(position)) return 'position is not a decimal string';
  if (typeof stream !== 'string' || typeof type !== 'string') return 'stream or type is not a string';
  if (typeof revision !== 'number' || !Number.isSafeInteger(revision) || revision < 0) return 'revision is not a non-negative integer';
  if (!isObject(data) || !isObject(metadata)) return 'data or metadata is not an object';
  if (typeof prevHash !== 'string' || !HEX_64.test(prevHash) || typeof hash !== 'string' || !HEX_64.test(hash)) return 'prevHash or hash is not 64 lowercase hex digits';
  return value as unknown as ExportLine;
};

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

const fromCsv = (text: string): unknown => {
  const fields = parseCsvRecord(text);
  if (!fields || fields.length !== CSV_COLUMNS.length) return undefined;
  const [position, stream, revision, type, data, metadata, prevHash, hash] = fields as [string, string, string, string, string, string, string, string];
  return { position, stream, revision: DECIMAL.test(revision) ? Number(revision) : revision, type, data: parseJson(data), metadata: parseJson(metadata), prevHash, hash };
};

/**
 * Recomputes an export's hash chain (CONTRACT §9) line by line, in constant memory, and names the
 * first line that breaks it: edited (its hash no longer matches), removed, inserted or reordered
 * (its prevHash is not the previous line's hash). Lines must also be in the canonical form the
 * export writes, so even an edit that leaves the parsed value alone is caught.
 */
export const verifyExport = async (lines: AsyncIterable<string> | Iterable<string>, options: VerifyOptions = {}): Promise<VerifyResult> => {
  let number = 0;
  let format: 'ndjson' | 'csv' | null = null;
  let expectedPrevHash = options.firstPrevHash ?? GENESIS_HASH;
  let previousPosition = -1n;
  let count = 0;
  let firstBlank: number | null = null;
  for await (const text of lines) {
    number++;
    if (text === '') {
      firstBlank ??= number;
      continue;
    }
    if (firstBlank !== null) return { ok: false, line: firstBlank, reason: 'empty line' };
    if (format === null) {
      format = text === CSV_COLUMNS.join(',') ? 'csv' : 'ndjson';
      if (format === 'csv') continue;
    }
    const parsed = format === 'csv' ? fromCsv(text) : parseJson(text);
    if (parsed === undefined) return { ok: false, line: number, reason: `not a valid ${format === 'csv' ? 'CSV record' : 'JSON line'}` };
    const line = shapeOf(parsed);
    if (typeof line === 'string') return { ok: false, line: number, reason: line };
    if (line.prevHash !== expectedPrevHash) {
      return { ok: false, line: number, reason: `prevHash ${line.prevHash} is not the previous line's hash ${expectedPrevHash} (a line was removed, inserted or reordered)` };
    }
    const { hash, ...unhashed } = line;
    if (lineHash(unhashed) !== hash) return { ok: false, line: number, reason: 'hash does not match the line (the line was edited)' };
    const position = BigInt(line.position);
    if (position <= previousPosition) return { ok: false, line: number, reason: `position ${position} is not after the previous line's ${previousPosition}` };
    const canonical = format === 'csv' ? toCsv(line).slice(0, -2) : toNdjson(line).slice(0, -1);
    if (text !== canonical) return { ok: false, line: number, reason: 'the line is not in the canonical form the export writes (the line was edited)' };
    expectedPrevHash = hash;
    previousPosition = position;
    count++;
  }
  return { ok: true, count, lastHash: expectedPrevHash, format: format ?? 'ndjson' };
};
