/**
 * RFC 8785 JSON Canonicalization Scheme for the JSON values events hold (objects, arrays,
 * strings, finite numbers, booleans, null). Object keys are sorted by UTF-16 code units (JS's
 * default string order); strings and numbers are serialized as ECMAScript's JSON.stringify does,
 * which is what RFC 8785 prescribes. Written here (a dozen lines) rather than added as a dependency.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('JCS: numbers must be finite');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item === undefined ? null : item)).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  throw new TypeError(`JCS: cannot serialize a ${typeof value}`);
};
