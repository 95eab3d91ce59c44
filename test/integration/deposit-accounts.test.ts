import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getOrCreateDepositAccount, type DepositAccountServices } from '../../src/application/deposit-accounts.js';
import type { DepositAddressBook } from '../../src/chains/address-book.js';
import { waitForProjection } from '../../src/application/projection-waiter.js';
import { ACCOUNTS_PROJECTION } from '../../src/projections/accounts.js';
import { streamCategories, streams } from '../../src/domain/streams.js';
import { categoryOf } from '../../src/eventstore/port.js';
import { startTestService, type TestService } from '../support/api-harness.js';

/** Addresses are the family adapters' business (tested with vectors); here: which index goes where. */
const addressBook: DepositAddressBook = {
  keySpace: (chainId) => (chainId.startsWith('eip155:') ? 'eip155' : chainId),
  addressAt: (chainId, index) => `${chainId.startsWith('eip155:') ? 'evm' : chainId}#${index}`,
  usesDestinationTags: (chainId) => chainId.startsWith('xrpl:'),
};

describe('deposit accounts: one per user per chain, indexes never handed out twice', () => {
  let service: TestService;
  let services: DepositAccountServices;
  let orgId: string;
  const metadata = { actor: 'test' };

  beforeAll(async () => {
    service = await startTestService();
    services = { store: service.infrastructure.store, clock: service.now, addresses: addressBook };
    orgId = (await service.bootstrap('Acme', ['alice'])).organization.id;
  });
  afterAll(async () => service.stop());

  const create = (chainId: string, externalUserId: string, org = orgId) => getOrCreateDepositAccount(services, { orgId: org, chainId, externalUserId }, metadata);

  it('gives 100 concurrent first requests of one user one account, one event and one account.created', async () => {
    const results = await Promise.all(Array.from({ length: 100 }, () => create('eip155:1', 'user-100')));
    expect(new Set(results.map((result) => result.account.orgDepositAccountId)).size).toBe(1);
    expect(results.filter((result) => result.created)).toHaveLength(1);
    const events = await service.infrastructure.store.readAll({ filter: { categories: ['account'] }, maxCount: 1000 });
    expect(events.filter((event) => event.data.externalUserId === 'user-100')).toHaveLength(1);
    await waitForProjection(service.infrastructure.db, ACCOUNTS_PROJECTION, await service.infrastructure.store.headPosition());
    const deliveries = await service.infrastructure.db.selectFrom('webhook_deliveries').select(['event_type', 'body']).where('org_id', '=', orgId).execute();
    const created = deliveries.filter((delivery) => delivery.event_type === 'account.created' && delivery.body.includes('"user-100"'));
    expect(created).toHaveLength(1);
    expect(JSON.parse(created[0]!.body)).toEqual({
      type: 'account.created',
      timestamp: results[0]!.account.createdAt,
      payload: {
        orgId,
        chainId: 'eip155:1',
        externalUserId: 'user-100',
        orgDepositAccountId: results[0]!.account.orgDepositAccountId,
        properties: { address: results[0]!.account.properties.address },
        createdAt: results[0]!.account.createdAt,
      },
    });
  });

  it('hands 40 concurrent new users 40 distinct indexes of the key space', async () => {
    const results = await Promise.all(Array.from({ length: 40 }, (_, index) => create('bip122:000000000019d6689c085ae165831e93', `btc-user-${index}`)));
    const indexes = results.map((result) => result.account.derivation.index).sort((a, b) => a - b);
    expect(indexes).toEqual(Array.from({ length: 40 }, (_, index) => index));
    expect(new Set(results.map((result) => result.account.properties.address)).size).toBe(40);
  });

  it('reads one event of the counter for a new index however many the space handed out; existing accounts keep theirs', async () => {
    const chainId = 'bip122:000000000933ea01ad0ee984209779ba';
    const earlier: number[] = [];
    for (let n = 0; n < 60; n++) earlier.push((await create(chainId, `history-${n}`)).account.derivation.index);
    expect(earlier).toEqual(Array.from({ length: 60 }, (_, index) => index));

    const { store } = service.infrastructure;
    let counterEventsRead = 0;
    const counting = {
      ...store,
      readStream: async (...args: Parameters<typeof store.readStream>) => {
        const events = await store.readStream(...args);
        if (categoryOf(args[0]) === streamCategories.derivationCounter) counterEventsRead += events.length;
        return events;
      },
    };
    const next = await getOrCreateDepositAccount({ ...services, store: counting }, { orgId, chainId, externalUserId: 'after-history' }, metadata);
    expect(next.account.derivation.index).toBe(60);
    expect(counterEventsRead).toBe(1);
    // the whole stream folded agrees with its last event: every index once, in order
    const counter = await store.readStream(streams.derivationCounter(addressBook.keySpace(chainId)));
    expect(counter.map((event) => event.data.index)).toEqual(Array.from({ length: 61 }, (_, index) => index));
    for (let n = 0; n < 60; n++) expect((await create(chainId, `history-${n}`)).account.derivation.index).toBe(n);
  });

  it('gives a user one address on every EVM chain (one key space) but one account per chain', async () => {
    const ethereum = await create('eip155:1', 'multi');
    const polygon = await create('eip155:137', 'multi');
    expect(polygon.account.orgDepositAccountId).not.toBe(ethereum.account.orgDepositAccountId);
    expect(polygon.account.properties.address).toBe(ethereum.account.properties.address);
    expect((await create('eip155:1', 'multi')).account.orgDepositAccountId).toBe(ethereum.account.orgDepositAccountId);
  });

  it('on XRP gives every user the organization’s address and a distinct destination tag', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, (_, index) => create('xrpl:mainnet', `xrp-user-${index}`)));
    expect(new Set(results.map((result) => result.account.properties.address)).size).toBe(1);
    const tags = results.map((result) => ('destinationTag' in result.account.properties ? result.account.properties.destinationTag : ''));
    expect(new Set(tags).size).toBe(12);
    for (const tag of tags) expect(tag).toMatch(/^[1-9]\d*$/);
    const otherOrg = (await service.bootstrap('Globex', ['gina'])).organization.id;
    const foreign = await create('xrpl:mainnet', 'xrp-user-0', otherOrg);
    expect(foreign.account.properties.address).not.toBe(results[0]!.account.properties.address);
    expect(foreign.account.properties).toMatchObject({ destinationTag: '1' });
  });

  it('refuses a user id that is empty, too long or not printable ASCII, and writes nothing', async () => {
    const before = await service.infrastructure.store.headPosition();
    for (const externalUserId of ['', 'x'.repeat(256), 'tab\there', 'ünïcode', 'line\nbreak']) {
      await expect(create('eip155:1', externalUserId)).rejects.toMatchObject({ code: 'INVALID_USER_ID' });
    }
    await expect(create('eip155:1', 'x'.repeat(255))).resolves.toBeDefined();
    const written = await service.infrastructure.store.readAll({ afterPosition: before });
    expect(written.filter((event) => event.type === 'AccountCreated')).toHaveLength(1);
  });
});
