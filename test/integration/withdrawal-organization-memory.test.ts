import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganizationStates } from '../../src/application/organization-states.js';
import { changeMinWithdrawalSigners } from '../../src/application/organizations.js';
import { setChainEnabled } from '../../src/application/chain-switches.js';
import { createWithdrawal, type WithdrawalServices } from '../../src/application/withdrawals.js';
import { streams } from '../../src/domain/streams.js';
import type { EventStore, StreamChanges } from '../../src/eventstore/port.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { fundGasWallet, fundLedger, stopWithdrawalProcessors, withdrawalServicesOf } from '../support/withdrawals.js';

const ETH = 'eip155:1/slip44:60';
const RECIPIENT = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const AMOUNT = 1_000_000_000_000_000n;

/** a change feed that vouches for memory and never tells a change: another process's notification that has not arrived yet */
const notYetNotified: StreamChanges = { following: () => true, follow: () => () => undefined };

/**
 * POST /withdrawals decides on the organization as memory holds it. When another process changed
 * the organization and its notification has not arrived, memory is stale: the decision must still
 * use the organization as its stream stands (the check of its revision in the ledger's turn sends
 * it back to be decided on the stream), so no approval or switch is skipped.
 */
describe('a withdrawal decided on an organization memory holds stale (real PostgreSQL)', () => {
  let service: TestService;
  let services: WithdrawalServices;
  let reference = 0;
  const request = () => ({ chainId: 'eip155:1', tokenId: ETH, amount: AMOUNT.toString(), recipient: RECIPIENT, reference: `stale-${++reference}` });

  beforeAll(async () => {
    service = await startTestService({ DEVNET_BLOCK_TIME_MS: '3600000' });
    await stopWithdrawalProcessors(service);
    const deafStore: EventStore = { ...service.services.store, changes: notYetNotified };
    services = { ...withdrawalServicesOf(service), organizationStates: createOrganizationStates(deafStore) };
  });
  afterAll(async () => service.stop());

  const organization = async (name: string) => {
    const created = await service.bootstrap(name, [`${name}-initiator`, `${name}-second`], { minWithdrawalSigners: 1 });
    const orgId = created.organization.id;
    await fundLedger(service, orgId, 'eip155:1', 10n * AMOUNT);
    await fundGasWallet(service, created.apiKey, orgId, 'eip155:1', 10n ** 16n);
    return { orgId, caller: { orgId, userId: created.users[0]!.id } };
  };

  it('a threshold raised elsewhere is applied: the withdrawal needs the new number of approvals', async () => {
    const { orgId, caller } = await organization('raised');
    const first = await createWithdrawal(services, caller, request(), { actor: caller.userId });
    expect(first).toMatchObject({ status: 'Pending', minWithdrawalSigners: 1 });

    // another process raises the threshold; this one's memory does not hear of it
    await changeMinWithdrawalSigners(service.services, orgId, 2, { actor: caller.userId, credential: 'api-key' });
    const kept = await services.organizationStates!.get(streams.organization(orgId));
    expect(kept.fromMemory).toBe(true);
    expect(kept.state.status === 'Active' && kept.state.minWithdrawalSigners).toBe(1);

    const second = await createWithdrawal(services, caller, request(), { actor: caller.userId });
    expect(second).toMatchObject({ status: 'PendingApproval', minWithdrawalSigners: 2 });
  });

  it('a chain switched off elsewhere is refused, though memory still has it on', async () => {
    const { orgId, caller } = await organization('switched');
    await createWithdrawal(services, caller, request(), { actor: caller.userId });
    await setChainEnabled(service.services, orgId, 'eip155:1', false, { actor: caller.userId });
    expect((await services.organizationStates!.get(streams.organization(orgId))).fromMemory).toBe(true);
    await expect(createWithdrawal(services, caller, request(), { actor: caller.userId })).rejects.toMatchObject({ code: 'CHAIN_NOT_ENABLED' });
  });
});
