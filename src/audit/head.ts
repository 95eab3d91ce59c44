import { sign, verify, createPublicKey, type KeyObject } from 'node:crypto';
import { exportLines, type ExportDependencies } from './export.js';
import { GENESIS_HASH } from './export-line.js';
import { canonicalJson } from './jcs.js';
import type { AuditCategory } from '../projections/stream-ownership.js';

/**
 * Where an organization's export ends now: the last line's position and hash of a full export from
 * the start, its number of lines, and when. Signed with the audit key (Ed25519 over the JCS of the
 * four fields), so an auditor who keeps heads over time can prove a later file was neither cut
 * short nor rewritten, and that one taken now ends where the service said it did.
 */
export interface AuditHead {
  position: string;
  hash: string;
  lines: number;
  at: string;
}

export type SignedAuditHead = AuditHead & { signature: string };

const signedBytes = ({ position, hash, lines, at }: AuditHead) => Buffer.from(canonicalJson({ position, hash, lines, at }), 'utf8');

export const auditHead = async (dependencies: ExportDependencies, options: { orgId: string; categories?: readonly AuditCategory[] }, privateKey: KeyObject, now: Date): Promise<SignedAuditHead> => {
  let lines = 0;
  let position = '0';
  let hash = GENESIS_HASH;
  for await (const batch of exportLines(dependencies, options)) {
    const last = batch.at(-1);
    if (!last) continue;
    lines += batch.length;
    position = last.position;
    hash = last.hash;
  }
  const head: AuditHead = { position, hash, lines, at: now.toISOString() };
  return { ...head, signature: sign(null, signedBytes(head), privateKey).toString('base64') };
};

/** whether the head was signed by the audit key whose public key (PEM) is given */
export const headSignedBy = (head: SignedAuditHead, publicKeyPem: string): boolean => {
  try {
    return verify(null, signedBytes(head), createPublicKey(publicKeyPem), Buffer.from(head.signature, 'base64'));
  } catch {
    return false;
  }
};

/**
 * An export checked against a head: it must end exactly there. `count` and `lastHash` are what
 * the chain check found; `headerLines` is 1 for CSV (its header is line 1 of the file).
 */
export const compareWithHead = (file: { count: number; lastHash: string }, head: AuditHead, headerLines = 0): { ok: true } | { ok: false; line: number; reason: string } => {
  if (file.count < head.lines) return { ok: false, line: headerLines + file.count + 1, reason: `the file ends after ${file.count} lines; the head says ${head.lines}: it was cut short` };
  if (file.count > head.lines) return { ok: false, line: headerLines + head.lines + 1, reason: `the head ends after ${head.lines} lines; this line and the ones after it were added` };
  if (file.lastHash !== head.hash) return { ok: false, line: headerLines + file.count, reason: 'the last line’s hash is not the head’s: the file is another history' };
  return { ok: true };
};
