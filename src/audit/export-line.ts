import { createHash } from 'node:crypto';
import { SECRET_FIELDS } from '../domain/organization/events.js';
import type { RecordedEvent } from '../eventstore/port.js';
import { canonicalJson } from './jcs.js';

/** CONTRACT §9: one exported event. */
export interface ExportLine {
  /** the event's global position, a decimal string */
  position: string;
  stream: string;
  /** the event's revision in its stream (0 for a stream's first event) */
  revision: number;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  prevHash: string;
  hash: string;
}

export type UnhashedLine = Omit<ExportLine, 'hash'>;

/** The first line's prevHash when an export does not continue an earlier one. */
export const GENESIS_HASH = '0'.repeat(64);

/** CONTRACT §9: lowercase hex SHA-256 of `prevHash + "\n" + JCS(line without hash)`. */
export const lineHash = (line: UnhashedLine): string =>
  createHash('sha256').update(`${line.prevHash}\n${canonicalJson(line)}`, 'utf8').digest('hex');

/**
 * Field names that hold sealed or one-way-hashed secrets, beyond SECRET_FIELDS: a guard for event
 * types added later (`…Encrypted` is the sealing convention, `…Digest` the keyed-hash one).
 * Transaction and block hashes are public chain data and stay.
 */
const SECRET_NAME = /Encrypted$|Digest$|^passwordHash$|secret/i;

const withoutSecrets = (value: unknown, named: ReadonlySet<string>): unknown => {
  if (Array.isArray(value)) return value.map((item) => withoutSecrets(item, named));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([key]) => !named.has(key) && !SECRET_NAME.test(key))
      .map(([key, item]) => [key, withoutSecrets(item, named)]),
  );
};

/** The event's data as an auditor may see it: no API-key digests, password hashes, sealed TOTP seeds or signing secrets. */
export const redactedData = (type: string, data: Record<string, unknown>): Record<string, unknown> =>
  withoutSecrets(data, new Set((SECRET_FIELDS as Record<string, string[] | undefined>)[type] ?? [])) as Record<string, unknown>;

/** Chains one event onto the export: its line, whose hash is the next line's prevHash. */
export const exportLine = (event: RecordedEvent, prevHash: string): ExportLine => {
  const unhashed: UnhashedLine = {
    position: event.position.toString(),
    stream: event.stream,
    revision: Number(event.revision),
    type: event.type,
    data: redactedData(event.type, event.data),
    metadata: { ...event.metadata },
    prevHash,
  };
  return { ...unhashed, hash: lineHash(unhashed) };
};

/** NDJSON: the line in canonical form, so the bytes themselves are deterministic. */
export const toNdjson = (line: ExportLine): string => `${canonicalJson(line)}\n`;

export const CSV_COLUMNS = ['position', 'stream', 'revision', 'type', 'data', 'metadata', 'prevHash', 'hash'] as const;

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
const csvField = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);

export const CSV_HEADER = `${CSV_COLUMNS.join(',')}\r\n`;

/** CSV: the same columns, `data` and `metadata` as canonical JSON text; CRLF line ends (RFC 4180). */
export const toCsv = (line: ExportLine): string =>
  `${[line.position, line.stream, String(line.revision), line.type, canonicalJson(line.data), canonicalJson(line.metadata), line.prevHash, line.hash].map(csvField).join(',')}\r\n`;
