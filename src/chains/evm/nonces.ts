/** How long a nonce this process broadcast counts even if the node's pending count does not show it yet. */
export const NONCE_MEMORY_MS = 60_000;

/**
 * The nonce manager of each sending wallet. The node's pending transaction count is the truth, but
 * behind a load balancer, or right after a failover, the node asked may not have seen the
 * transaction just sent: the next nonce is then at least one past the last one this process
 * broadcast. Only accepted broadcasts are remembered, and only for NONCE_MEMORY_MS, so a transaction
 * the network dropped cannot leave a wallet stuck behind a nonce gap for long. (The sweeper and the
 * processor send one transaction per wallet at a time and record it before broadcasting; this
 * covers the node's view, not concurrency.)
 */
export const createNonceTracker = (clock: () => number = Date.now) => {
  const lastSent = new Map<string, { nonce: number; at: number }>();
  return {
    next: (address: string, pendingCount: number): number => {
      const remembered = lastSent.get(address.toLowerCase());
      if (!remembered || clock() - remembered.at > NONCE_MEMORY_MS) return pendingCount;
      return Math.max(pendingCount, remembered.nonce + 1);
    },
    sent: (address: string, nonce: number): void => {
      const key = address.toLowerCase();
      const remembered = lastSent.get(key);
      if (!remembered || nonce >= remembered.nonce) lastSent.set(key, { nonce, at: clock() });
    },
  };
};
