/**
 * Settlement throughput: how long `count` withdrawals queued at once on one chain (one
 * organization, the devnet) take from the first POST /withdrawals to the last one Completed,
 * beside the chain's confirmation time (confirmations × block time). Boots `ledgergate serve` on a
 * fresh DATA_DIR, bootstraps an organization with one signer, funds it (a deposit to a user's
 * address, native coin to the gas wallet), and completes one withdrawal first (the deposit swept,
 * the settlement wallet ready) before the clock starts (bench/lib/phases/settlement.ts, which
 * `npm run bench` runs on Ethereum and Bitcoin). Progress on stderr, one table on stdout.
 *
 *   npm run bench:settlement
 *   BENCH_SETTLEMENT_COUNT=10 BENCH_SETTLEMENT_CHAINS=eip155:1 npm run bench:settlement
 *
 * Variables: BENCH_SETTLEMENT_COUNT (100), BENCH_SETTLEMENT_CHAINS (eip155:1,xrpl:mainnet,
 * tron:0x00000000000000000000000000000000: each chain's native coin), BENCH_BLOCK_TIME_MS (500),
 * BENCH_SETTLEMENT_TIMEOUT_S (1800 per chain).
 */
import { runBenchmark, type Lifecycle } from './lib/lifecycle.js';
import { bootstrapWithOwnReceiver, fundOrganization, listTokens } from './lib/organization.js';
import { measureChainSettlement, nativeTokenOf, type ChainSettlement } from './lib/phases/settlement.js';
import { machineLine } from './lib/report.js';
import { startBenchService } from './lib/service.js';
import { positive } from './lib/settings.js';
import { formatTable } from './lib/table.js';

const DEFAULT_CHAINS = ['eip155:1', 'xrpl:mainnet', 'tron:0x00000000000000000000000000000000'];

const progress = (message: string) => console.error(`· ${new Date().toISOString().slice(11, 19)} ${message}`);

const main = async (lifecycle: Lifecycle) => {
  const count = Math.round(positive('BENCH_SETTLEMENT_COUNT', 100));
  const blockTimeMs = Math.round(positive('BENCH_BLOCK_TIME_MS', 500));
  process.env.BENCH_BLOCK_TIME_MS = String(blockTimeMs);
  const timeoutMs = positive('BENCH_SETTLEMENT_TIMEOUT_S', 1800) * 1000;
  const chainIds = (process.env.BENCH_SETTLEMENT_CHAINS ?? DEFAULT_CHAINS.join(',')).split(',').map((id) => id.trim()).filter(Boolean);
  progress(machineLine());
  const service = await startBenchService(lifecycle, progress);
  const org = await bootstrapWithOwnReceiver(lifecycle, service);
  const tokens = await listTokens(org.api);
  const rows: ChainSettlement[] = [];
  for (const chainId of chainIds) {
    lifecycle.checkpoint();
    const token = nativeTokenOf(tokens, chainId);
    progress(`${chainId}: funding`);
    await fundOrganization(lifecycle, org.api, [token], progress);
    rows.push(await measureChainSettlement({ lifecycle, api: org.api, token, count, blockTimeMs, timeoutMs, progress }));
  }
  await service.stop();
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  console.log(
    formatTable(
      [
        { header: 'chain' },
        { header: 'withdrawals', align: 'right' },
        { header: 'transactions', align: 'right' },
        { header: 'confirmation time', align: 'right' },
        { header: 'first completed', align: 'right' },
        { header: 'all completed', align: 'right' },
        { header: 'all ÷ (confirmation + 10 s)', align: 'right' },
      ],
      rows.map((row) => [row.chainId, String(row.withdrawals), String(row.transactions), seconds(row.confirmationMs), seconds(row.firstMs), seconds(row.ms), (row.ms / (row.confirmationMs + 10_000)).toFixed(2)]),
    ),
  );
};

await runBenchmark(main);
