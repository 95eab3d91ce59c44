import type { ChainGateway } from './gateway.js';

/** The gateway of a chain the service runs (the devnet's, or a node's), undefined for a chain that does not run. */
export type GatewayLookup = (chainId: string) => ChainGateway | undefined;
