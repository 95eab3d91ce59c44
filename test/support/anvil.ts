import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Contract, JsonRpcProvider, Wallet, type InterfaceAbi } from 'ethers';
import solc from 'solc';

const root = path.resolve(import.meta.dirname, '../..');
/** the npm package's launcher: it starts the platform binary from @foundry-rs/anvil-<platform> and forwards signals */
const anvilLauncher = path.join(root, 'node_modules', '@foundry-rs', 'anvil', 'bin.mjs');
/** anvil's first default account ("test test … junk"): funded with 10,000 ETH, the outside world of the tests */
const FUNDED_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

export interface Anvil {
  url: string;
  provider: JsonRpcProvider;
  /** an outside account with 10,000 ETH */
  funded: Wallet;
  mine(blocks?: number): Promise<void>;
  head(): Promise<number>;
  stop(): Promise<void>;
}

/** anvil's line saying where it listens, once it does */
const LISTENING = /Listening on 127\.0\.0\.1:(\d+)/;

/**
 * A real anvil node (automine on: each transaction gets its own block), `--chain-id` as given. It
 * listens on a port the system picks (`--port 0`) and says which: a port chosen here and handed to
 * it could be taken by another process in between.
 */
export const startAnvil = async (chainId: number): Promise<Anvil> => {
  const child: ChildProcess = spawn(process.execPath, [anvilLauncher, '--chain-id', String(chainId), '--port', '0', '--host', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<string>((resolve, reject) => {
    let said = '';
    let listening = false;
    const timer = setTimeout(() => reject(new Error(`anvil did not say where it listens: ${stderr}`)), 30_000);
    // read until the line that names the port, then drain the rest unread (a full pipe would stop anvil)
    child.stdout?.on('data', (chunk: Buffer) => {
      if (listening) return;
      said += chunk.toString();
      const match = LISTENING.exec(said);
      if (!match) return;
      listening = true;
      clearTimeout(timer);
      resolve(match[1]!);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`anvil exited before listening: ${stderr}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const provider = new JsonRpcProvider(url, chainId, { staticNetwork: true, cacheTimeout: -1 });
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await provider.send('eth_chainId', []);
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`anvil did not start: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    url,
    provider,
    funded: new Wallet(FUNDED_KEY, provider),
    mine: async (blocks = 1) => {
      await provider.send('anvil_mine', [`0x${blocks.toString(16)}`]);
    },
    head: async () => Number(await provider.send('eth_blockNumber', [])),
    stop: async () => {
      provider.destroy();
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
};

/** A minimal ERC-20 for tests: balances, transfer with Transfer events, and a public mint. */
const TEST_TOKEN_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract TestToken {
  mapping(address => uint256) public balanceOf;
  event Transfer(address indexed from, address indexed to, uint256 value);
  function transfer(address to, uint256 value) external returns (bool) {
    require(balanceOf[msg.sender] >= value, "insufficient balance");
    balanceOf[msg.sender] -= value;
    balanceOf[to] += value;
    emit Transfer(msg.sender, to, value);
    return true;
  }
  function mint(address to, uint256 value) external {
    balanceOf[to] += value;
    emit Transfer(address(0), to, value);
  }
}`;

interface SolcOutput {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: InterfaceAbi; evm: { deployedBytecode: { object: string } } }>>;
}

/** Compiled offline by solc-js (the compiler ships inside the npm package). */
export const compileTestToken = (): { abi: InterfaceAbi; runtimeBytecode: string } => {
  const input = { language: 'Solidity', sources: { 'TestToken.sol': { content: TEST_TOKEN_SOURCE } }, settings: { outputSelection: { '*': { '*': ['abi', 'evm.deployedBytecode.object'] } } } };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((error) => error.formattedMessage).join('\n'));
  const compiled = output.contracts['TestToken.sol']!.TestToken!;
  return { abi: compiled.abi, runtimeBytecode: `0x${compiled.evm.deployedBytecode.object}` };
};

/**
 * The test token's runtime code placed at `address` (anvil_setCode): the catalog's real contract
 * address (USDT's) then holds a token the test controls, and the catalog stays as it is.
 */
export const placeTestToken = async (anvil: Anvil, address: string): Promise<Contract> => {
  const { abi, runtimeBytecode } = compileTestToken();
  await anvil.provider.send('anvil_setCode', [address, runtimeBytecode]);
  return new Contract(address, abi, anvil.funded);
};
