import { describe, expect, it } from 'vitest';
import { organizationDecider } from '../../src/domain/organization/decide.js';
import type { OrganizationEvent } from '../../src/domain/organization/events.js';
import { fold } from '../../src/domain/decider.js';
import { NOW, specFor } from '../support/given-when-then.js';

const given = specFor(organizationDecider);
const at = NOW.toISOString();
const USDT = 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7';

const created: OrganizationEvent = {
  type: 'OrganizationCreated',
  data: { orgId: 'o1', name: 'Acme', minWithdrawalSigners: 1, webhookUrl: null, webhookSigningSecretEncrypted: 'v1.s', createdAt: at },
};
const chainDisabled = (chainId: string): OrganizationEvent => ({ type: 'ChainDisabled', data: { orgId: 'o1', chainId, disabledAt: at } });
const chainEnabled = (chainId: string): OrganizationEvent => ({ type: 'ChainEnabled', data: { orgId: 'o1', chainId, enabledAt: at } });
const tokenDisabled = (tokenId: string): OrganizationEvent => ({ type: 'TokenDisabled', data: { orgId: 'o1', tokenId, disabledAt: at } });
const tokenEnabled = (tokenId: string): OrganizationEvent => ({ type: 'TokenEnabled', data: { orgId: 'o1', tokenId, enabledAt: at } });

describe('organization decider: chain and token switches', () => {
  it('switches a chain off, and on again', () => {
    given([created]).when({ type: 'DisableChain', chainId: 'eip155:1' }).then([chainDisabled('eip155:1')]);
    given([created, chainDisabled('eip155:1')]).when({ type: 'EnableChain', chainId: 'eip155:1' }).then([chainEnabled('eip155:1')]);
  });

  it('changes nothing when the chain is already in the state asked for', () => {
    given([created]).when({ type: 'EnableChain', chainId: 'eip155:1' }).then([]);
    given([created, chainDisabled('eip155:1')]).when({ type: 'DisableChain', chainId: 'eip155:1' }).then([]);
    given([created, chainDisabled('eip155:1'), chainEnabled('eip155:1')]).when({ type: 'EnableChain', chainId: 'eip155:1' }).then([]);
  });

  it('refuses an unsupported or malformed chain id with INVALID_CHAIN', () => {
    given([created]).when({ type: 'DisableChain', chainId: 'eip155:2' }).thenThrows('INVALID_CHAIN');
    given([created]).when({ type: 'EnableChain', chainId: 'ethereum' }).thenThrows('INVALID_CHAIN');
  });

  it('switches a token off and on, recording the catalog’s id whatever the case of the contract given', () => {
    given([created]).when({ type: 'DisableToken', tokenId: 'eip155:1/erc20:0xdAC17F958D2ee523a2206206994597C13D831ec7' }).then([tokenDisabled(USDT)]);
    given([created, tokenDisabled(USDT)]).when({ type: 'EnableToken', tokenId: USDT }).then([tokenEnabled(USDT)]);
    given([created, tokenDisabled(USDT)]).when({ type: 'DisableToken', tokenId: USDT }).then([]);
    given([created]).when({ type: 'EnableToken', tokenId: USDT }).then([]);
  });

  it('refuses an unknown token id with INVALID_TOKEN', () => {
    given([created]).when({ type: 'DisableToken', tokenId: 'eip155:1/erc20:0x0000000000000000000000000000000000000001' }).thenThrows('INVALID_TOKEN', {
      providedTokenId: 'eip155:1/erc20:0x0000000000000000000000000000000000000001',
    });
  });

  it('refuses switches on an organization that does not exist', () => {
    given([]).when({ type: 'DisableChain', chainId: 'eip155:1' }).thenThrows('NOT_FOUND');
    given([]).when({ type: 'DisableToken', tokenId: USDT }).thenThrows('NOT_FOUND');
  });

  it('keeps the switched-off ids in the state', () => {
    const state = fold(organizationDecider, [created, chainDisabled('eip155:1'), chainDisabled('xrpl:mainnet'), chainEnabled('eip155:1'), tokenDisabled(USDT)]);
    expect(state).toMatchObject({ status: 'Active', disabledChainIds: ['xrpl:mainnet'], disabledTokenIds: [USDT] });
  });
});
