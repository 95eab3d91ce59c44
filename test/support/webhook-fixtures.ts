import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { encryptSecret, secretPurpose } from '../../src/security/secret-box.js';
import type { WebhookEventType } from '../../src/webhooks/event-types.js';
import { enqueueWebhook, releaseWaitingDeliveries } from '../../src/webhooks/outbox.js';

export const testEncryptionKey = randomBytes(32);

/** An organizations row as the projection writes it, with its signing secret encrypted. */
export const insertOrganization = async (
  db: Kysely<Database>,
  options: { webhookUrl: string | null; signingSecret?: string },
): Promise<{ orgId: string; signingSecret: string }> => {
  const orgId = randomUUID();
  const signingSecret = options.signingSecret ?? randomBytes(32).toString('hex');
  const now = new Date();
  await db
    .insertInto('organizations')
    .values({
      id: orgId,
      name: `org-${orgId.slice(0, 8)}`,
      webhook_url: options.webhookUrl,
      webhook_signing_secret_encrypted: encryptSecret(testEncryptionKey, signingSecret, secretPurpose.webhookSigningSecret(orgId)),
      min_withdrawal_signers: 1,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return { orgId, signingSecret };
};

export const setSigningSecret = (db: Kysely<Database>, orgId: string, signingSecret: string) =>
  db
    .updateTable('organizations')
    .set({ webhook_signing_secret_encrypted: encryptSecret(testEncryptionKey, signingSecret, secretPurpose.webhookSigningSecret(orgId)) })
    .where('id', '=', orgId)
    .execute();

/** as the organizations projection does on WebhookUrlSet: the row, then what waited for a URL */
export const setWebhookUrl = (db: Kysely<Database>, orgId: string, webhookUrl: string | null) =>
  db.transaction().execute(async (trx) => {
    await trx.updateTable('organizations').set({ webhook_url: webhookUrl }).where('id', '=', orgId).execute();
    if (webhookUrl !== null) await releaseWaitingDeliveries(trx, orgId);
  });

/** Enqueues `count` webhooks for one organization in one transaction (as a projection batch would); answers their ids, oldest first. */
export const enqueueTestWebhooks = async (
  db: Kysely<Database>,
  orgId: string,
  count = 1,
  type: WebhookEventType = 'deposit.detected',
): Promise<string[]> => {
  const keys = Array.from({ length: count }, () => `${orgId}:${type}:${randomUUID()}`);
  await db.transaction().execute(async (trx) => {
    for (const [index, dedupeKey] of keys.entries()) {
      await enqueueWebhook(trx, {
        orgId,
        type,
        payload: { txnHash: `0x${index.toString(16).padStart(64, '0')}`, amount: String(1000 + index), confirmations: 0 },
        timestamp: new Date(Date.UTC(2026, 10, 22, 10, 0, 0, index)),
        dedupeKey,
      });
    }
  });
  const rows = await db.selectFrom('webhook_deliveries').select(['id', 'dedupe_key']).where('dedupe_key', 'in', keys).execute();
  const idByKey = new Map(rows.map((row) => [row.dedupe_key, row.id]));
  return keys.map((key) => idByKey.get(key) as string);
};
