import fs from 'node:fs/promises';
import path from 'node:path';
import { generateMnemonic, validateMnemonic } from 'bip39';

/**
 * The only private key material of the service: a BIP39 mnemonic from LEDGERGATE_SIGNER_MNEMONIC
 * (production), or generated once under DATA_DIR/secrets (mode 0600) for the devnet. Only the
 * signer module reads it; it is never logged and never part of an event.
 */
export const loadSignerMnemonic = async (options: { mnemonic?: string; dataDir: string; isProduction: boolean }): Promise<string | null> => {
  if (options.mnemonic) {
    if (!validateMnemonic(options.mnemonic.trim())) throw new Error('LEDGERGATE_SIGNER_MNEMONIC is not a valid BIP39 mnemonic');
    return options.mnemonic.trim();
  }
  if (options.isProduction) return null; // no keys: every chain stays disabled
  const file = path.join(options.dataDir, 'secrets', 'signer.mnemonic');
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await fs.writeFile(file, generateMnemonic(256) + '\n', { mode: 0o600, flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const stored = (await fs.readFile(file, 'utf8')).trim();
  if (!validateMnemonic(stored)) throw new Error(`${file} does not hold a valid BIP39 mnemonic`);
  return stored;
};
