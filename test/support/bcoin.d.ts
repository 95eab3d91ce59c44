/** The few parts of bcoin 1.0.2 (no types of its own) the regtest harness uses. */
declare module 'bcoin' {
  interface Hashable {
    hash(encoding: 'hex'): string;
    txid(): string;
    toRaw(): Buffer;
    outputs: { value: number; script: unknown }[];
    inputs: { prevout: { hash: string; index: number }; sequence: number }[];
    getVirtualSize(): number;
  }
  export type TX = Hashable;
  interface MempoolEntry {
    tx: TX;
    fee: number;
  }
  interface VerifyErrorLike {
    type: string;
    code: string;
    reason: string;
  }
  export interface ChainEntry {
    height: number;
    rhash(): string;
  }
  interface CPUJob {
    attempt: { addTX(tx: TX, view: CoinView): void };
    refresh(): void;
  }
  export interface CoinView {
    addCoin(coin: Coin): void;
  }
  export interface FullNode {
    open(): Promise<void>;
    close(): Promise<void>;
    chain: { height: number; tip: ChainEntry; add(block: unknown): Promise<ChainEntry | null> };
    miner: { mempool: unknown; cpu: { createJob(tip: ChainEntry | null, address: unknown): Promise<CPUJob>; mineAsync(job: CPUJob): Promise<{ txs: TX[] }> } };
    mempool: {
      addTX(tx: TX): Promise<unknown[] | null>;
      getEntry(hash: string): MempoolEntry | null;
      getSpent(hash: string, index: number): MempoolEntry | null | undefined;
      evictEntry(entry: MempoolEntry): void;
      hasEntry(hash: string): boolean;
      removeOrphan(hash: string): void;
      hasOrphan(hash: string): boolean;
    };
    rpc: { call(body: unknown, query: unknown): Promise<{ result: unknown; error: { code: number; message: string } | null; id: unknown }> };
  }
  const bcoin: {
    FullNode: new (options: Record<string, unknown>) => FullNode;
    KeyRing: { generate(): KeyRing };
    MTX: new () => MTX;
    TX: { fromRaw(raw: Buffer): TX };
    Coin: { fromTX(tx: TX, index: number, height: number): Coin };
    CoinView: new () => CoinView;
    Script: { fromRaw(raw: Buffer): unknown };
    set(network: string): void;
  };
  export interface KeyRing {
    getAddress(): unknown;
    getPublicKey(): Buffer;
  }
  export interface Coin {
    value: number;
  }
  export interface MTX {
    addCoin(coin: Coin): void;
    addOutput(script: unknown, value: number): void;
    inputs: { sequence: number }[];
    sign(ring: KeyRing): number;
    toTX(): TX;
  }
  export type { VerifyErrorLike };
  export default bcoin;
}
