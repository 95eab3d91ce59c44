import canonicalize from 'canonicalize';
import type { AuditHead } from './api.js';

/**
 * An export checked in the browser, with the same two sentences as CONTRACT §9: each line's hash
 * is the SHA-256 (SubtleCrypto) of `prevHash + "\n" + JCS(line without hash)`, the first prevHash
 * is 64 zeros, and the file must end exactly at the signed head fetched before it.
 */
const GENESIS = '0'.repeat(64);

const hex = (buffer: ArrayBuffer) => [...new Uint8Array(buffer)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
const sha256 = async (text: string) => hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));

export type ChainCheck = { ok: true; lines: number; lastHash: string } | { ok: false; line: number; reason: string };

export const checkChain = async (ndjson: string, head: AuditHead): Promise<ChainCheck> => {
  const lines = ndjson.split('\n').filter((line) => line !== '');
  let previous = GENESIS;
  for (const [index, text] of lines.entries()) {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return { ok: false, line: index + 1, reason: 'not JSON' };
    }
    const { hash, ...unhashed } = line;
    if (unhashed.prevHash !== previous) return { ok: false, line: index + 1, reason: 'its prevHash is not the previous line’s hash' };
    const expected = await sha256(`${previous}\n${canonicalize(unhashed) ?? ''}`);
    if (hash !== expected) return { ok: false, line: index + 1, reason: 'its hash does not match its content' };
    previous = expected;
  }
  if (lines.length !== head.lines) return { ok: false, line: Math.min(lines.length, head.lines) + 1, reason: `the file has ${lines.length} lines, the signed head says ${head.lines}` };
  if (previous !== head.hash) return { ok: false, line: lines.length, reason: 'the last hash is not the signed head’s' };
  return { ok: true, lines: lines.length, lastHash: previous };
};

const spkiOf = (pem: string) => Uint8Array.from(atob(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '')), (char) => char.charCodeAt(0));

/** The head's Ed25519 signature under the service's audit key; null when this browser has no Ed25519. */
export const headSignatureValid = async (head: AuditHead, publicKeyPem: string): Promise<boolean | null> => {
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey('spki', spkiOf(publicKeyPem), { name: 'Ed25519' }, false, ['verify']);
  } catch {
    return null;
  }
  const signed = new TextEncoder().encode(canonicalize({ position: head.position, hash: head.hash, lines: head.lines, at: head.at }) ?? '');
  const signature = Uint8Array.from(atob(head.signature), (char) => char.charCodeAt(0));
  return crypto.subtle.verify({ name: 'Ed25519' }, key, signature, signed);
};
