import { createHmac } from 'node:crypto';

/** SPEC §6.2: lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the signing secret. */
export const signWebhookBody = (secret: string | Buffer, body: string | Buffer): string => createHmac('sha256', secret).update(body).digest('hex');
