/** a high surrogate not followed by a low one, or a low one not preceded by a high one */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why PostgreSQL cannot store a string (text or jsonb), or null when it can: NUL characters, and UTF-16 halves without their pair. */
export const unstorableReason = (text: string): string | null => {
  if (text.includes('\u0000')) return 'must not contain a NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'must not contain a lone UTF-16 surrogate';
  return null;
};

/**
 * Every string in a validated input (body, query, path) that the stores could not hold, with its
 * path: such a string is refused up front (400), before it can fail a write, and with it a batch of
 * other callers' writes.
 */
export const unstorableStrings = (value: unknown, path: (string | number)[] = []): { path: string; message: string }[] => {
  if (typeof value === 'string') {
    const reason = unstorableReason(value);
    return reason ? [{ path: path.join('.'), message: reason }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((item, index) => unstorableStrings(item, [...path, index]));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>).flatMap(([key, item]) => [
      ...(unstorableReason(key) ? [{ path: [...path, key].join('.'), message: `a key ${unstorableReason(key)}` }] : []),
      ...unstorableStrings(item, [...path, key]),
    ]);
  }
  return [];
};
