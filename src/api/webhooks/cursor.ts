import { DomainError } from '../../domain/errors.js';

/**
 * CONTRACT §6: an opaque cursor. Here base64url of `d1:<seq>`, the insertion sequence number of
 * a page's last delivery; the next page holds the older ones.
 */
export const encodeCursor = (seq: string): string => Buffer.from(`d1:${seq}`, 'utf8').toString('base64url');

export const decodeCursor = (cursor: string): string => {
  const seq = /^[A-Za-z0-9_-]{1,64}$/.test(cursor) ? /^d1:([1-9]\d{0,17})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))?.[1] : undefined;
  if (seq === undefined) throw new DomainError('BAD_REQUEST', 'The cursor is invalid: pass nextCursor from a previous page');
  return seq;
};
