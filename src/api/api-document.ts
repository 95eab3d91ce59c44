import { createLogger } from '../log.js';
import { createApp, type AppDependencies } from './app.js';

/**
 * Stands in for every dependency of the app: describing the routes touches none of them, and a
 * call that did would fail loudly instead of answering from a fake.
 */
const untouchable = <T>(name: string): T =>
  new Proxy({}, {
    get: (_target, key) => {
      if (key === 'then') return undefined;
      throw new Error(`the API document touched ${name}.${String(key)}`);
    },
  }) as T;

/**
 * The OpenAPI document a development service serves (every optional resource mounted), built
 * without a database: what the typed client in src/client is generated from.
 */
export const apiDocument = async (): Promise<object> => {
  const dependencies: AppDependencies = {
    logger: createLogger('silent'),
    health: untouchable('health'),
    services: { ...untouchable<AppDependencies['services']>('services'), isProduction: false, clock: () => new Date(0), keyring: untouchable('keyring'), db: untouchable('db'), store: untouchable('store') },
    depositAccounts: untouchable('depositAccounts'),
    chains: untouchable('chains'),
    rateLimits: { perMinute: 1, loginPerMinute: 1 },
    devnet: untouchable('devnet'),
    gasStation: untouchable('gasStation'),
    withdrawals: untouchable('withdrawals'),
  };
  const response = await createApp(dependencies).request('/openapi.json');
  return (await response.json()) as object;
};
