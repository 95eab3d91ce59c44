import { OpenAPIHono } from '@hono/zod-openapi';
import { HTTPException } from 'hono/http-exception';
import type { DepositAccountServices } from '../application/deposit-accounts.js';
import type { OrganizationServices } from '../application/organizations.js';
import type { OrganizationWallets } from '../application/organization-wallets.js';
import type { GatewayLookup } from '../chains/gateway-lookup.js';
import type { ChainAvailability } from '../chains/chain-availability.js';
import type { Devnet } from '../chains/devnet/index.js';
import { chainAndTokenChecker } from '../application/chain-enablement.js';
import { DomainError } from '../errors.js';
import type { Logger } from '../log.js';
import { accountRoutes } from './accounts/index.js';
import { auditPublicKeyRoutes, auditRoutes, withdrawalHistoryRoutes } from './audit/index.js';
import { loginRoutes, profileRoutes } from './auth/index.js';
import { chainRoutes } from './chains/index.js';
import { devnetRoutes } from './devnet/index.js';
import { gasStationRoutes } from './gas-station/index.js';
import { docsRoutes } from './docs/index.js';
import { consoleRoutes } from '../console/routes.js';
import { ApiError, internalError, notFound } from './errors.js';
import { healthRoutes, type HealthCheck } from './health/index.js';
import { metricsRoutes } from './metrics/index.js';
import { readinessRoutes, type ReadinessCheck } from './readiness/index.js';
import { authenticate, requirePerson } from './middleware/authenticate.js';
import { limitBody } from './middleware/body.js';
import { limitRate } from './middleware/rate-limit.js';
import { organisationRoutes } from './organisation/index.js';
import { paymentRoutes } from './payments/index.js';
import { portfolioRoutes } from './portfolio/index.js';
import { RateLimiter } from './rate-limiter.js';
import { LoginLimits } from './auth/login-limits.js';
import { allowedMethods } from './allowed-methods.js';
import { forClientGenerators } from './openapi-document.js';
import { requestContext, type AppEnv } from './request-context.js';
import { RememberingTrieRouter } from './remembered-matches.js';
import { tokenRoutes } from './tokens/index.js';
import { webhookRoutes } from './webhooks/index.js';
import { withdrawalRoutes } from './withdrawals/index.js';

export interface AppDependencies {
  logger: Logger;
  health: HealthCheck;
  /** GET /readyz: whether this process may take traffic yet (absent: ready at once) */
  readiness?: ReadinessCheck;
  services: OrganizationServices;
  depositAccounts: DepositAccountServices;
  /** which chains run service-wide; each organization may switch them off */
  chains: ChainAvailability;
  rateLimits: { perMinute: number; loginPerMinute: number };
  /** CONTRACT §8: the devnet whose /devnet/* endpoints are mounted; null (always in production): no such routes */
  devnet?: Devnet | null;
  /** GET /gas-station: the organizations' wallets and the chains' gateways (absent: no such route) */
  gasStation?: { wallets: OrganizationWallets; gateways: GatewayLookup } | null;
  /** /withdrawals: the chains' gateways (tag and gas checks) and the organizations' wallets (null without a signer) */
  withdrawals?: { gateways: GatewayLookup; wallets: OrganizationWallets | null } | null;
}

/** Paths behind authentication and the per-caller rate limit; everything else is public or 404. */
// '/x/*' also matches '/x' itself: each path once, or its middleware would run twice
const PROTECTED_PATHS = ['/auth/profile', '/organisation/*', '/webhooks/*', '/chains/*', '/tokens', '/payments/*', '/accounts', '/portfolio', '/gas-station', '/withdrawals/*', '/audit/*'];

const OPENAPI_INFO = {
  openapi: '3.1.0',
  info: {
    title: 'ledgergate',
    version: '0.1.0',
    description: 'Multi-chain crypto deposits and withdrawals. Errors have the body { error, message, statusCode, details? }.',
  },
};

const fromHttpException = (error: HTTPException): ApiError => {
  if (error.status === 413) return new ApiError('PAYLOAD_TOO_LARGE', 413, 'The request body is too large');
  // 400: malformed JSON; 415: a body that is not application/json
  if (error.status === 400 || error.status === 415) return new ApiError('BAD_REQUEST', 400, error.message || 'Malformed request');
  return internalError();
};

/** 404 and 405 for what no route answers, and one error body for whatever a handler throws. */
const withErrorAnswers = <App extends OpenAPIHono<AppEnv>>(app: App, logger: Logger): App => {
  // a known path asked with a method it does not have: 405 naming the ones it has (RFC 9110)
  const methodsOf = allowedMethods(app.routes);
  app.notFound((c) => {
    const allowed = methodsOf(c.req.path);
    // no route here, or one that has this method and found nothing (an asset that does not exist)
    if (allowed.length === 0 || allowed.includes(c.req.method)) return c.json(notFound().toBody(), 404);
    c.header('Allow', allowed.join(', '));
    return c.json(new ApiError('METHOD_NOT_ALLOWED', 405, `${c.req.method} is not allowed here; use ${allowed.join(', ')}`).toBody(), 405);
  });
  app.onError((error, c) => {
    const apiError =
      error instanceof ApiError
        ? error
        : error instanceof DomainError
          ? ApiError.fromDomain(error)
          : error instanceof HTTPException
            ? fromHttpException(error)
            : null;
    if (apiError) return c.json(apiError.toBody(), apiError.status, apiError.headers);
    // named by the request's id (a process without log contexts, the workers', has it only here)
    logger.error('unhandled error', { requestId: c.get('requestId'), error: error.message, stack: error.stack });
    return c.json(internalError().toBody(), 500);
  });
  return app;
};

type OperationsDependencies = Pick<AppDependencies, 'logger' | 'health' | 'readiness'>;

/**
 * The shared middleware and what an operator asks of every process: /healthz, /readyz, /metrics.
 * `logContext`: whether each request's handlers log within its log context (see requestContext).
 */
const operationsApp = ({ logger, health, readiness = async () => ({ ready: true, waitingFor: [] }) }: OperationsDependencies, logContext = true) => {
  const app = new OpenAPIHono<AppEnv>({ router: new RememberingTrieRouter() });
  app.use('*', requestContext(logger, { logContext }));
  app.use('*', limitBody());

  app.route('/', healthRoutes(health));
  app.route('/', readinessRoutes(readiness));
  app.route('/', metricsRoutes());
  return app;
};

/**
 * A `workers` process's HTTP (SERVE_ROLE): /healthz, /readyz and /metrics alone, so its health
 * can be checked and its workers' figures scraped; every other path is 404 (the API is served by
 * the `api` processes). Without a log context: its handlers log nothing of their own, and a
 * context entered once would tax every promise of the workers (see requestContext).
 */
export const createOperationsApp = (dependencies: OperationsDependencies) => withErrorAnswers(operationsApp(dependencies, false), dependencies.logger);

/** The Hono application: shared middleware, error mapping, and one router per resource. */
export const createApp = ({ logger, health, readiness, services, depositAccounts, chains, rateLimits, devnet = null, gasStation = null, withdrawals = null }: AppDependencies) => {
  const app = operationsApp({ logger, health, readiness });
  // a person who opens the service's address finds the console (integrators: /docs, linked from it and from the start line)
  app.get('/', (c) => c.redirect('/console', 302));
  app.route('/', docsRoutes());
  app.route('/', consoleRoutes());
  app.route('/', auditPublicKeyRoutes(services.keyring));
  // the services' clock: one time source for the whole app (and tests that move it are deterministic)
  const clockMs = () => services.clock().getTime();
  app.route('/', loginRoutes(services, new LoginLimits(rateLimits.loginPerMinute, clockMs)));

  const callerLimiter = new RateLimiter(rateLimits.perMinute, 60_000, clockMs);
  const devnetMounted = devnet !== null && !services.isProduction;
  // one authentication for every path: the key ids it remembers are shared
  const authenticated = authenticate(services);
  for (const path of [...PROTECTED_PATHS, ...(devnetMounted ? ['/devnet/*'] : [])]) app.use(path, authenticated, limitRate(callerLimiter));
  app.use('/auth/profile', requirePerson());
  app.route('/', profileRoutes(services));
  app.route('/', organisationRoutes(services));
  app.route('/', webhookRoutes({ db: services.db }));
  app.route('/', chainRoutes({ db: services.db, availability: chains }));
  app.route('/', tokenRoutes({ db: services.db, availability: chains }));
  if (devnetMounted) app.route('/', devnetRoutes(devnet));
  app.route('/', accountRoutes({ db: services.db, accounts: depositAccounts, checkDepositTarget: chainAndTokenChecker(services.db, chains) }));
  app.route('/', paymentRoutes({ db: services.db }));
  app.route('/', portfolioRoutes({ db: services.db }));
  if (gasStation) app.route('/', gasStationRoutes({ db: services.db, availability: chains, ...gasStation }));
  if (withdrawals) app.route('/', withdrawalRoutes({ ...services, availability: chains, ...withdrawals }));
  app.route('/', withdrawalHistoryRoutes(services));
  app.route('/', auditRoutes(services));

  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKeyAuth', { type: 'apiKey', in: 'header', name: 'x-api-key' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
  let document: ReturnType<typeof app.getOpenAPI31Document> | null = null;
  app.get('/openapi.json', (c) => c.json((document ??= forClientGenerators(app.getOpenAPI31Document(OPENAPI_INFO)))));
  return withErrorAnswers(app, logger);
};

export type App = ReturnType<typeof createApp>;
