/** Operations anyone may call: their `security` is empty, so tools do not ask for credentials. */
const PUBLIC_OPERATIONS = new Set(['get /healthz', 'get /readyz', 'get /metrics', 'post /auth/login', 'get /audit/public-key']);

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** `post /withdrawals/{id}/approve` → `postWithdrawalsIdApprove`: stable, unique, what client generators name methods by. */
export const operationIdOf = (method: string, path: string) =>
  method +
  path
    .split(/[/{}-]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');

/**
 * What client generators and linters need beyond what the routes say: a `servers` entry, an
 * `operationId` on every operation (kept where a route names its own), and `security: []` on the
 * operations that take no credentials.
 */
export const forClientGenerators = <Document extends object>(document: Document): Document => {
  const described = document as { paths?: Record<string, Record<string, unknown>> };
  const paths = Object.fromEntries(
    Object.entries(described.paths ?? {}).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item).map(([method, operation]) => {
          if (!(METHODS as readonly string[]).includes(method) || typeof operation !== 'object' || operation === null) return [method, operation];
          const described = operation as { operationId?: string; security?: unknown };
          return [
            method,
            {
              ...described,
              operationId: described.operationId ?? operationIdOf(method, path),
              ...(PUBLIC_OPERATIONS.has(`${method} ${path}`) ? { security: [] } : {}),
            },
          ];
        }),
      ),
    ]),
  );
  return { ...document, servers: [{ url: '/', description: 'this service' }], paths };
};
