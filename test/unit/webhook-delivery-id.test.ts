import { describe, expect, it } from 'vitest';
import { deliveryIdOf, webhookDedupeKey } from '../../src/webhooks/outbox.js';

/**
 * A delivery's id (`x-webhook-id`, on which receivers dedupe) comes from its dedupe key and its
 * event's time: written again for the same source event (a projection batch a server crash lost,
 * applied again) it has the id it had; deliveries of different events or types never share one;
 * and it is a UUID of version 7 whose milliseconds are the event's (in time order).
 */
describe('a webhook delivery id', () => {
  const at = new Date('2026-11-27T09:00:00.123Z');
  const key = webhookDedupeKey('org_a', 'withdrawal.created', '0b7c2d6e-0000-4000-8000-000000000001');

  it('is the same for the same dedupe key, and differs between keys', () => {
    expect(deliveryIdOf(key, at)).toBe(deliveryIdOf(key, new Date(at.getTime())));
    const others = [
      webhookDedupeKey('org_a', 'withdrawal.approved', '0b7c2d6e-0000-4000-8000-000000000001'),
      webhookDedupeKey('org_b', 'withdrawal.created', '0b7c2d6e-0000-4000-8000-000000000001'),
      webhookDedupeKey('org_a', 'withdrawal.created', '0b7c2d6e-0000-4000-8000-000000000002'),
    ];
    expect(new Set([key, ...others].map((each) => deliveryIdOf(each, at))).size).toBe(4);
  });

  it('is the id it was when it was first derived: an outbox row keeps it, a migration computes it in SQL', () => {
    expect(deliveryIdOf('org_1:withdrawal.created:0190a3f1-7c2e-7b4d-9a1e-3f5b2c8d9e10', new Date('2026-11-27T20:00:00.123Z'))).toBe('01a21e97-e27b-7840-ab48-351b43338c2c');
    expect(deliveryIdOf('ö:😀', new Date(0))).toBe('00000000-0000-71aa-a37b-b1285562047b');
  });

  it('is a UUID of version 7 carrying its event time, so later events sort after earlier ones', () => {
    const id = deliveryIdOf(key, at);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at.getTime());
    expect(deliveryIdOf(key, new Date(at.getTime() + 1)) > id).toBe(true);
  });
});
