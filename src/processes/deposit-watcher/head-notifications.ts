import { ChannelListener } from '../../db/channel-listener.js';
import type { PoolTarget } from '../../db/pool.js';
import type { Logger } from '../../log.js';
import { Wakeup } from '../../lib/wakeup.js';

/**
 * Notifications that a chain's head moved, on a channel whose payload is the chain's id (the
 * devnet sends one with every block it mines or reorganizes). A watcher woken by them looks at its
 * chain once per block instead of polling twice a block. They vouch for nothing: one lost (the
 * session down, or sent before LISTEN took effect) only delays the watcher to its slow safety
 * poll, and while nobody listens the watcher polls as it would without them.
 */
export class HeadNotifications {
  private readonly wakeups = new Map<string, Wakeup>();
  private readonly listener: ChannelListener;

  constructor(
    target: PoolTarget,
    channel: string,
    /** the chains whose heads the channel announces */
    private readonly chainIds: ReadonlySet<string>,
    logger: Logger,
  ) {
    // no payload: listening (re)started, anything may have been missed
    this.listener = new ChannelListener(target, channel, (chainId) => (chainId === undefined ? this.wakeAll() : this.wakeupOf(chainId)?.wake()), logger);
  }

  /** LISTEN is in effect: every head announced from now on wakes its watcher */
  get listening(): boolean {
    return this.listener.listening;
  }

  /** the channel announces this chain's heads */
  announces(chainId: string): boolean {
    return this.chainIds.has(chainId);
  }

  /** forget earlier notifications of the chain: call before reading its head */
  reset(chainId: string): void {
    this.wakeupOf(chainId)?.reset();
  }

  /**
   * Waits for the chain's next head (a notification since reset()), at most `safetyMs` while
   * listening, or `pollMs` while not; a stop request ends the wait at once.
   */
  async waitForHead(chainId: string, timeouts: { safetyMs: number; pollMs: number }, signal: AbortSignal): Promise<void> {
    const wakeup = this.wakeupOf(chainId);
    if (!wakeup || signal.aborted) return;
    this.listener.ensureListening();
    const stop = () => wakeup.wake();
    signal.addEventListener('abort', stop, { once: true });
    try {
      await wakeup.wait(this.listener.listening ? timeouts.safetyMs : timeouts.pollMs);
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  private wakeupOf(chainId: string): Wakeup | undefined {
    if (!this.chainIds.has(chainId)) return undefined;
    let wakeup = this.wakeups.get(chainId);
    if (!wakeup) this.wakeups.set(chainId, (wakeup = new Wakeup()));
    return wakeup;
  }

  private wakeAll(): void {
    for (const chainId of this.chainIds) this.wakeupOf(chainId)!.wake();
  }
}
