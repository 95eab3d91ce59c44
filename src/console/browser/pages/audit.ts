import { api } from '../api.js';
import { checkChain, headSignatureValid } from '../audit-chain.js';
import { el, notice, replace } from '../dom.js';

/**
 * The organization's NDJSON export, fetched with the session's token, checked here (hash chain,
 * signed head) and offered as a `Download export` link to exactly the bytes that were checked.
 */
export const auditPage = async (container: HTMLElement) => {
  const result = el('div', { class: 'verification' }, el('p', { class: 'loading' }, 'Fetching the export and checking its hash chain…'));
  replace(
    container,
    el('h1', {}, 'Audit'),
    el(
      'p',
      { class: 'hint' },
      'The export holds every event of your organization in order, one JSON object per line, each line hashed over the one before it. This page checks the chain in your browser and that the file ends exactly at the head the service signed; `ledgergate verify <file> --head <head.json>` does the same from the command line.',
    ),
    result,
  );

  const head = await api.auditHead();
  const [text, publicKey] = await Promise.all([api.auditExport(head.position), api.auditPublicKey()]);
  const [chain, signature] = await Promise.all([checkChain(text, head), headSignatureValid(head, publicKey)]);
  const file = new Blob([text], { type: 'application/x-ndjson' });
  const name = `ledgergate-audit-${head.at.replace(/[:.]/g, '-')}.ndjson`;
  const link = el('a', { href: URL.createObjectURL(file), download: name, class: 'button' }, 'Download export');

  const signatureText = signature === null ? 'This browser cannot check Ed25519 signatures; check the head with the command line.' : signature ? 'The head’s signature is the service’s audit key’s.' : 'The head’s signature does NOT match the audit key.';
  replace(
    result,
    chain.ok && signature !== false
      ? notice('status', `Verified: ${chain.lines} lines, every hash matches, and the file ends at the signed head. ${signatureText}`)
      : notice('alert', chain.ok ? signatureText : `Not verified: line ${chain.line}: ${chain.reason}.`),
    el(
      'dl',
      { class: 'summary' },
      el('dt', {}, 'Lines'),
      el('dd', {}, String(head.lines)),
      el('dt', {}, 'Last position'),
      el('dd', {}, head.position),
      el('dt', {}, 'Head hash'),
      el('dd', {}, el('code', {}, head.hash)),
      el('dt', {}, 'Head signed at'),
      el('dd', {}, head.at),
    ),
    el('p', {}, link, ' ', el('span', { class: 'note' }, `${name}, ${file.size} bytes`)),
  );
};
