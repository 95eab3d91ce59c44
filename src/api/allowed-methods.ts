/** A route pattern as Hono writes it (`/withdrawals/:id/approve`, `/docs/*`) as a regular expression over a path. */
const patternOf = (path: string) => new RegExp(`^${path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\/\*$/, '(/.*)?').replace(/:[^/]+/g, '[^/]+')}/?$`);

/**
 * The methods the app answers on a path, from its registered routes (middleware, registered for
 * every method, is left out): what a 405 names in its `Allow` header.
 */
export const allowedMethods = (routes: readonly { method: string; path: string }[]) => {
  const handlers = routes.filter((route) => route.method !== 'ALL').map((route) => ({ method: route.method, pattern: patternOf(route.path) }));
  return (path: string): string[] => {
    const methods = new Set(handlers.filter((handler) => handler.pattern.test(path)).map((handler) => handler.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
};
