import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import { DomainError } from '../errors.js';

/**
 * Read-your-writes for commands whose answer must already hold in the read models (a rotated API
 * key must be refused the moment the rotation is answered): wait until the projection has applied
 * the append's position. Across processes too: the checkpoint lives in the shared database.
 */
export const waitForProjection = async (db: Kysely<Database>, projection: string, position: bigint, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (let delayMs = 2; ; delayMs = Math.min(delayMs * 2, 50)) {
    const row = await db.selectFrom('projection_checkpoints').select('position').where('name', '=', projection).executeTakeFirst();
    if (row && BigInt(row.position) >= position) return;
    if (Date.now() > deadline) {
      throw new DomainError('SERVICE_UNAVAILABLE', 'The change is recorded but not yet visible; retry the read shortly', { projection });
    }
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
};
