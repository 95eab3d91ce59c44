import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as CONTRACT §2 fixes it: SHA-1, 6 digits, 30-second steps, accepted within ±1 step. */
const PERIOD_SECONDS = 30;
const ISSUER = 'ledgergate';

const totpFor = (seedBase32: string, username = 'user') =>
  new TOTP({ issuer: ISSUER, label: username, algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS, secret: Secret.fromBase32(seedBase32) });

export const generateTotpSeed = (): string => new Secret({ size: 20 }).base32;

export const otpauthUrl = (seedBase32: string, username: string): string => totpFor(seedBase32, username).toString();

export const timeStep = (at: Date): number => Math.floor(at.getTime() / 1000 / PERIOD_SECONDS);

/** the time step the code belongs to (current ±1), or null when it matches none */
export const matchingTimeStep = (seedBase32: string, code: string, at: Date): number | null => {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totpFor(seedBase32).validate({ token: code, timestamp: at.getTime(), window: 1 });
  return delta === null ? null : timeStep(at) + delta;
};

/** the code for a moment (tests, and people checking their authenticator) */
export const totpCode = (seedBase32: string, at: Date): string => totpFor(seedBase32).generate({ timestamp: at.getTime() });
