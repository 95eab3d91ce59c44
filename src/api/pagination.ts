import { z } from '@hono/zod-openapi';
import { DomainError } from '../errors.js';

/**
 * CONTRACT §6: list endpoints are newest first and take `limit` (1–1000, default 100) and `cursor`;
 * the answer adds `nextCursor` (null on the last page). Lists page by an insertion sequence number
 * (`seq`): a cursor is base64url of `d1:<seq of the page's last row>`, and the next page holds
 * older rows. One module, every list.
 */
export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(1000).default(100).openapi({ example: 100 }),
  cursor: z.string().max(200).optional().openapi({ description: 'nextCursor of the previous page' }),
};

export const encodeCursor = (seq: string): string => Buffer.from(`d1:${seq}`, 'utf8').toString('base64url');

export const decodeCursor = (cursor: string): string => {
  const seq = /^[A-Za-z0-9_-]{1,64}$/.test(cursor) ? /^d1:([1-9]\d{0,17})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))?.[1] : undefined;
  if (seq === undefined) throw new DomainError('BAD_REQUEST', 'The cursor is invalid: pass nextCursor from a previous page');
  return seq;
};

/** Rows fetched with `limit + 1`: the page, and the cursor of the next one. */
export const toPage = <Row extends { seq: string }>(rows: Row[], limit: number) => {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { page, nextCursor: rows.length > limit && last ? encodeCursor(last.seq) : null };
};
