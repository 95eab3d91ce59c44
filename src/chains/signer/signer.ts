import ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory, type BIP32Interface } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import { signBitcoinTransfer, type BitcoinOutput } from '../bitcoin/transactions.js';
import type { ChainDefinition, ChainFamily, ChainNetwork } from '../../catalog/chain.js';
import { signEvmTransfer, type EvmTransferParams } from '../evm/transactions.js';
import { addressCodecs } from '../families.js';
import { signTronTransfer, type TronTransferParams } from '../tron/transactions.js';
import { signXrpPayment, type XrpPaymentParams } from '../xrp/transactions.js';
import { BoundedMap } from '../../lib/bounded-map.js';

const bip32 = BIP32Factory(ecc);

/**
 * A wallet of the service on a chain: `receive` children (0/i) are deposit addresses, `service`
 * children (1/i) organization-independent wallets (Bitcoin change), `settlement` children (2/i)
 * and `gas` children (3/i) an organization's settlement and gas wallets (i allocated once per
 * organization and key space, src/application/organization-wallets.ts).
 */
export interface WalletRef {
  branch: 'receive' | 'service' | 'settlement' | 'gas';
  index: number;
}

const BRANCH = { receive: 0, service: 1, settlement: 2, gas: 3 } as const;

/** wallets whose address a signer keeps: its settlement, gas and change wallets come back at every payment, a deposit address at each sweep */
const KEPT_ADDRESSES = 1024;

/**
 * The only holder of private keys (ARCHITECTURE invariant 10). The rest of the service sees
 * account-level extended public keys and addresses; signing happens in here, and no method returns
 * a private key. The object prints as "[Signer]", never its seed.
 */
export interface Signer {
  /** the account-level extended public key of a family on a network (what deposit addresses derive from) */
  accountXpub(family: ChainFamily, network: ChainNetwork): string;
  /** the address of one of the service's wallets on a chain */
  addressOf(chain: ChainDefinition, wallet: WalletRef): string;
  /** an EIP-1559 native or ERC-20 transfer from `wallet`, for the chain's EIP-155 id; the raw signed transaction */
  signEvmTransfer(chain: ChainDefinition, wallet: WalletRef, params: EvmTransferParams): string;
  /** spends P2WPKH outputs of the service's wallets (each input names the wallet that holds it) */
  signBitcoinTransfer(chain: ChainDefinition, inputs: BitcoinInputOfWallet[], outputs: BitcoinOutput[]): { raw: string; txHash: string };
  /** a TRX or TRC-20 transfer from `wallet`, built offline; the signed transaction as JSON */
  signTronTransfer(chain: ChainDefinition, wallet: WalletRef, params: TronTransferParams): string;
  /** an XRP payment from `wallet` (its address is the Account); the signed tx_blob */
  signXrpPayment(chain: ChainDefinition, wallet: WalletRef, params: Omit<XrpPaymentParams, 'account'>): string;
}

/** An unspent output of one of the service's Bitcoin wallets. */
export interface BitcoinInputOfWallet {
  wallet: WalletRef;
  txHash: string;
  index: number;
  amount: bigint;
  /** nSequence (BIP125 replaceable when below 0xfffffffe); absent: final */
  sequence?: number;
}

const requireFamily = (chain: ChainDefinition, family: ChainFamily) => {
  if (chain.family !== family) throw new Error(`${chain.id} is not a ${family} chain`);
};

/** The signer over a BIP39 mnemonic. Private keys come from `privateKeyOf` and go only to the family signing functions. */
export const createSigner = (mnemonic: string) => {
  const root: BIP32Interface = bip32.fromSeed(mnemonicToSeedSync(mnemonic));
  // the account and branch nodes, kept (four branches per account): a wallet is then one derivation from its branch, whose
  // public key (which every child's derivation needs: an elliptic-curve multiplication) is computed once, not at every signature
  const kept = new Map<string, BIP32Interface>();
  const keptNode = (key: string, derive: () => BIP32Interface) => {
    let node = kept.get(key);
    if (!node) {
      node = derive();
      kept.set(key, node);
    }
    return node;
  };
  const account = (family: ChainFamily, network: ChainNetwork) => keptNode(`${family}:${network}`, () => root.derivePath(addressCodecs[family].accountPath(network)));
  const branch = (chain: ChainDefinition, name: WalletRef['branch']) =>
    keptNode(`${chain.family}:${chain.network}:${name}`, () => account(chain.family, chain.network).derive(BRANCH[name]));
  const child = (chain: ChainDefinition, wallet: WalletRef) => branch(chain, wallet.branch).derive(wallet.index);
  // an address is public and never changes for a wallet: kept, since each one costs a derivation (an elliptic-curve
  // multiplication) and a hash, and every signature checks the address it is asked to sign from (bounded, about 150 bytes an entry)
  const addresses = new BoundedMap<string, string>(KEPT_ADDRESSES);
  const addressOf = (chain: ChainDefinition, wallet: WalletRef): string => {
    const key = `${chain.family}:${chain.network}:${wallet.branch}:${wallet.index}`;
    let address = addresses.get(key);
    if (address === undefined) {
      address = addressCodecs[chain.family].addressFromPublicKey(child(chain, wallet).publicKey, chain.network);
      addresses.set(key, address);
    }
    return address;
  };
  // the one place a private key leaves the key tree: each signing method hands it straight to its family's function
  const privateKeyOf = (chain: ChainDefinition, wallet: WalletRef): Uint8Array => {
    const privateKey = child(chain, wallet).privateKey;
    if (!privateKey) throw new Error('the signer holds no private key for this wallet');
    return privateKey;
  };

  const signer: Signer = {
    accountXpub: (family, network) => account(family, network).neutered().toBase58(),
    addressOf,
    signEvmTransfer: (chain, wallet, params) => {
      requireFamily(chain, 'evm');
      if (chain.evmChainId === undefined) throw new Error(`${chain.id} has no EIP-155 chain id`);
      return signEvmTransfer(privateKeyOf(chain, wallet), { ...params, chainId: chain.evmChainId });
    },
    signBitcoinTransfer: (chain, inputs, outputs) => {
      requireFamily(chain, 'bitcoin');
      const keyedInputs = inputs.map(({ wallet, txHash, index, amount, sequence }) => ({ txHash, index, amount, ...(sequence === undefined ? {} : { sequence }), privateKey: privateKeyOf(chain, wallet) }));
      return signBitcoinTransfer({ network: chain.network, inputs: keyedInputs, outputs });
    },
    signTronTransfer: (chain, wallet, params) => {
      requireFamily(chain, 'tron');
      return signTronTransfer(privateKeyOf(chain, wallet), params);
    },
    signXrpPayment: (chain, wallet, params) => {
      requireFamily(chain, 'xrp');
      return signXrpPayment(privateKeyOf(chain, wallet), { ...params, account: signer.addressOf(chain, wallet) });
    },
  };
  Object.defineProperty(signer, 'toJSON', { value: () => '[Signer]', enumerable: false });
  Object.defineProperty(signer, Symbol.for('nodejs.util.inspect.custom'), { value: () => '[Signer]', enumerable: false });
  return signer;
};
