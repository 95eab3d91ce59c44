/**
 * Every PostgreSQL session this process opens is named `ledgergate:<pid>:<purpose>`, so the
 * embedded server's owner can tell whether another ledgergate process still uses it.
 */
export const applicationName = (purpose: string): string => `ledgergate:${process.pid}:${purpose}`;
