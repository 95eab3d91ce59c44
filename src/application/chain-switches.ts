import type { OrganizationCommand } from '../domain/organization/decide.js';
import { organizationDecider } from '../domain/organization/decide.js';
import { streams } from '../domain/streams.js';
import { handleCommand, type CommandMetadata, type CommandServices } from './command-handler.js';

const onOrganization = (services: CommandServices, orgId: string, command: OrganizationCommand, metadata: CommandMetadata) =>
  handleCommand(services, streams.organization(orgId), organizationDecider, command, { ...metadata, orgId });

/**
 * Switches a chain off or on for one organization. `position` is null when it already was in that
 * state (nothing appended).
 */
export const setChainEnabled = async (services: CommandServices, orgId: string, chainId: string, enabled: boolean, metadata: CommandMetadata) => {
  const { position } = await onOrganization(services, orgId, { type: enabled ? 'EnableChain' : 'DisableChain', chainId }, metadata);
  return { position };
};

/** Switches a token off or on for one organization; `position` as for chains. */
export const setTokenEnabled = async (services: CommandServices, orgId: string, tokenId: string, enabled: boolean, metadata: CommandMetadata) => {
  const { position } = await onOrganization(services, orgId, { type: enabled ? 'EnableToken' : 'DisableToken', tokenId }, metadata);
  return { position };
};
