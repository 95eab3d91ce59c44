import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseCsvRecord } from '../../src/audit/csv.js';
import { CSV_HEADER, exportLine, GENESIS_HASH, redactedData, toCsv, toNdjson, type ExportLine } from '../../src/audit/export-line.js';
import { canonicalJson } from '../../src/audit/jcs.js';
import { verifyExport } from '../../src/audit/verify.js';
import type { RecordedEvent } from '../../src/eventstore/port.js';

const event = (position: number, overrides: Partial<RecordedEvent> = {}): RecordedEvent => ({
  id: `00000000-0000-4000-8000-${position.toString().padStart(12, '0')}`,
  stream: `ledger-org-1-token`,
  revision: BigInt(position - 1),
  position: BigInt(position * 3),
  type: 'FeeCharged',
  data: { orgId: 'org-1', amount: `${position}000`, note: 'a "quoted", comma\nline é 😀', nested: { b: 1, a: [true, null, 2.5] } },
  metadata: { actor: 'system', at: `2026-11-22T10:00:${String(position % 60).padStart(2, '0')}.000Z` },
  recordedAt: new Date(),
  ...overrides,
});

const chain = (count: number): ExportLine[] => {
  const lines: ExportLine[] = [];
  let prevHash = GENESIS_HASH;
  for (let position = 1; position <= count; position++) {
    const line = exportLine(event(position), prevHash);
    prevHash = line.hash;
    lines.push(line);
  }
  return lines;
};

const ndjsonLines = (lines: ExportLine[]) => lines.map((line) => toNdjson(line).slice(0, -1));

describe('JCS (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units and serializes numbers and strings as ECMAScript does', () => {
    // RFC 8785 §3.2.3's sorting example and §3.2.2.3's numbers
    expect(canonicalJson({ '\u20ac': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One', '\ud83d\ude00': 'Emoji: Grinning Face', '\u0080': 'Control', '\u00f6': 'Latin Small Letter O With Diaeresis' })).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
    expect(canonicalJson({ numbers: [Number('333333333.33333329'), 1e30, 4.5, 0.002, 1e-27, -0, 2e-3] })).toBe('{"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27,0,0.002]}');
    expect(canonicalJson({ b: [1, { d: 'x', c: null }], a: 'é' })).toBe('{"a":"é","b":[1,{"c":null,"d":"x"}]}');
  });
});

describe('the export hash chain', () => {
  it('hashes prevHash + "\\n" + JCS(line without hash), the first prevHash being 64 zeros', () => {
    const [first] = chain(1);
    const { hash, ...rest } = first!;
    expect(first!.prevHash).toBe(GENESIS_HASH);
    expect(hash).toBe(createHash('sha256').update(`${GENESIS_HASH}\n${canonicalJson(rest)}`).digest('hex'));
    expect(first).toMatchObject({ position: '3', revision: 0, stream: 'ledger-org-1-token' });
  });

  it('verifies an intact export: OK with the count and the last hash', async () => {
    const lines = chain(50);
    expect(await verifyExport(ndjsonLines(lines))).toEqual({ ok: true, count: 50, lastHash: lines[49]!.hash, format: 'ndjson' });
    // a file ends with a newline: the last empty "line" is not a line
    expect(await verifyExport([...ndjsonLines(lines), ''])).toMatchObject({ ok: true, count: 50 });
  });

  it('names the first bad line when one byte is changed, anywhere in the line', async () => {
    const text = ndjsonLines(chain(20));
    for (const [lineIndex, byteIndex] of [[0, 30], [7, 2], [7, 120], [19, text[19]!.length - 3], [12, text[12]!.indexOf('"prevHash"') + 14]] as const) {
      const tampered = [...text];
      const bytes = Buffer.from(tampered[lineIndex]!, 'utf8');
      bytes[byteIndex] = bytes[byteIndex]! ^ 0x01;
      tampered[lineIndex] = bytes.toString('utf8');
      const result = await verifyExport(tampered);
      expect(result, `line ${lineIndex + 1} byte ${byteIndex}`).toMatchObject({ ok: false, line: lineIndex + 1 });
    }
  });

  it('names the first bad line when a line is dropped, two lines are swapped or a line is inserted', async () => {
    const text = ndjsonLines(chain(20));
    const dropped = text.filter((_, index) => index !== 5);
    expect(await verifyExport(dropped)).toMatchObject({ ok: false, line: 6, reason: expect.stringContaining('prevHash') });
    const droppedFirst = text.slice(1);
    expect(await verifyExport(droppedFirst)).toMatchObject({ ok: false, line: 1 });
    const swapped = [...text];
    [swapped[8], swapped[9]] = [swapped[9]!, swapped[8]!];
    expect(await verifyExport(swapped)).toMatchObject({ ok: false, line: 9 });
    // an inserted line that does not chain onto the line before it is itself the bad line
    const inserted = [...text.slice(0, 4), toNdjson(exportLine(event(99), GENESIS_HASH)).slice(0, -1), ...text.slice(4)];
    expect(await verifyExport(inserted)).toMatchObject({ ok: false, line: 5 });
    // one forged to chain onto it (hash recomputed) breaks the chain at the line after it
    const forged = [...text.slice(0, 4), toNdjson(exportLine(event(99), chain(20)[3]!.hash)).slice(0, -1), ...text.slice(4)];
    expect(await verifyExport(forged)).toMatchObject({ ok: false, line: 6, reason: expect.stringContaining('prevHash') });
    const duplicated = [...text.slice(0, 11), text[10]!, ...text.slice(11)];
    expect(await verifyExport(duplicated)).toMatchObject({ ok: false, line: 12 });
    expect(await verifyExport([...text.slice(0, 3), '', ...text.slice(3)])).toMatchObject({ ok: false, line: 4, reason: 'empty line' });
  });

  it('continues an earlier export from its last hash', async () => {
    const lines = chain(10);
    let prevHash = lines[9]!.hash;
    const continued = [11, 12].map((position) => {
      const line = exportLine(event(position), prevHash);
      prevHash = line.hash;
      return line;
    });
    expect(await verifyExport(ndjsonLines(continued))).toMatchObject({ ok: false, line: 1 });
    expect(await verifyExport(ndjsonLines(continued), { firstPrevHash: lines[9]!.hash })).toMatchObject({ ok: true, count: 2, lastHash: prevHash });
  });

  it('writes CSV (RFC 4180) that parses back to the same lines and verifies the same way', async () => {
    const lines = chain(10);
    const csv = (CSV_HEADER + lines.map(toCsv).join('')).split('\r\n').slice(0, -1);
    expect(csv[0]).toBe('position,stream,revision,type,data,metadata,prevHash,hash');
    const parsed = csv.slice(1).map((record) => {
      const [position, stream, revision, type, data, metadata, prevHash, hash] = parseCsvRecord(record)!;
      return { position, stream, revision: Number(revision), type, data: JSON.parse(data!), metadata: JSON.parse(metadata!), prevHash, hash };
    });
    expect(parsed).toEqual(lines);
    expect(await verifyExport(csv)).toEqual({ ok: true, count: 10, lastHash: lines[9]!.hash, format: 'csv' });
    const swapped = [...csv];
    [swapped[3], swapped[4]] = [swapped[4]!, swapped[3]!];
    expect(await verifyExport(swapped)).toMatchObject({ ok: false, line: 4 });
    const edited = [...csv];
    edited[6] = edited[6]!.replace('FeeCharged', 'FeeChargeD');
    expect(await verifyExport(edited)).toMatchObject({ ok: false, line: 7, reason: expect.stringContaining('edited') });
  });

  it('drops secret fields: the listed ones and any sealed or digest field', () => {
    expect(redactedData('UserAdded', { orgId: 'o', userId: 'u', username: 'alice', passwordHash: 'scrypt$…', totpSeedEncrypted: 'v1.…', addedAt: 't' })).toEqual({ orgId: 'o', userId: 'u', username: 'alice', addedAt: 't' });
    expect(redactedData('ApiKeyIssued', { keyId: 'k', keyDigest: 'd' })).toEqual({ keyId: 'k' });
    expect(redactedData('SomethingNew', { txHash: '0xab', blockHash: '0xcd', nested: { signingSecretEncrypted: 's', apiKeyDigest: 'd', kept: 1 } })).toEqual({ txHash: '0xab', blockHash: '0xcd', nested: { kept: 1 } });
  });
});
