import canonicalize from 'canonicalize';

/**
 * RFC 8785 JSON Canonicalization Scheme, through `canonicalize` (the scheme's reference
 * implementation for JavaScript): object keys sorted by UTF-16 code units, strings and numbers as
 * ECMAScript serializes them; NaN, infinities and lone surrogates are refused.
 */
export const canonicalJson = (value: unknown): string => {
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new TypeError(`JCS: cannot serialize a ${typeof value}`);
  return canonical;
};
