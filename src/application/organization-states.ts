import { organizationDecider } from '../domain/organization/decide.js';
import type { Organization } from '../domain/organization/organization.js';
import { streams } from '../domain/streams.js';
import { categoryOf, type EventStore } from '../eventstore/port.js';
import { loadAggregate } from './command-handler.js';
import { StreamCache, type CachedStream } from './stream-cache.js';

/**
 * Every request reads its organization (the API key's owner, the members, the chain switches, the
 * approval threshold): kept in memory, dropped when its stream changes (see StreamCache).
 */
export type OrganizationStates = StreamCache<Organization>;

export const createOrganizationStates = (store: EventStore, limit?: number): OrganizationStates =>
  new StreamCache<Organization>(store, categoryOf(streams.organization('')), (stream) => loadAggregate(store, stream, organizationDecider), limit);

/** The organization's state and revision: from the services' memory when they keep one (unless `fresh`), else from its stream. */
export const loadOrganizationState = async (
  services: { store: EventStore; organizationStates?: OrganizationStates | undefined },
  orgId: string,
  options: { fresh?: boolean } = {},
): Promise<CachedStream<Organization>> => {
  const stream = streams.organization(orgId);
  if (services.organizationStates) return services.organizationStates.get(stream, options);
  return { ...(await loadAggregate(services.store, stream, organizationDecider)), fromMemory: false };
};

/** The organization as the services' memory holds it, at once (no read, no promise); undefined when they keep none or memory does not vouch for it. */
export const rememberedOrganizationState = (services: { organizationStates?: OrganizationStates | undefined }, orgId: string): CachedStream<Organization> | undefined =>
  services.organizationStates?.remembered(streams.organization(orgId));
