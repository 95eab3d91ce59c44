/**
 * Base units to token units with BigInt only: an amount never passes through a JavaScript
 * number, so 2^256 − 1 shows every digit.
 */
export const formatUnits = (baseUnits: string, decimals: number): string => {
  const negative = baseUnits.startsWith('-');
  const digits = (negative ? baseUnits.slice(1) : baseUnits).replace(/^0+(?=\d)/, '');
  if (!/^\d+$/.test(digits)) return baseUnits;
  const value = BigInt(digits);
  const scale = 10n ** BigInt(decimals);
  const whole = (value / scale).toString();
  const fraction = decimals === 0 ? '' : (value % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
};
