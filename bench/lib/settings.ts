/** A positive number from the environment, or `fallback`; anything else stops the bench with the variable's name. */
export const positive = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!(value > 0)) throw new Error(`${name} must be a positive number, not ${process.env[name]}`);
  return value;
};
