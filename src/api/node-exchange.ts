import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Context } from 'hono';

/**
 * Node's own request and response, when the app is served by Node's HTTP server (Hono's node
 * adapter puts them in the env); absent when it is driven through `app.request`, whose env may
 * still carry an `incoming` that is no stream (a test giving the connection's remote address).
 */
const nodeEnvOf = (c: Context) => c.env as { incoming?: unknown; outgoing?: unknown } | undefined;

export const nodeRequestOf = (c: Context): IncomingMessage | undefined => {
  const incoming = nodeEnvOf(c)?.incoming;
  return incoming instanceof Readable ? (incoming as IncomingMessage) : undefined;
};

export const nodeResponseOf = (c: Context): ServerResponse | undefined => {
  const outgoing = nodeEnvOf(c)?.outgoing as { setHeader?: unknown; headersSent?: unknown } | undefined;
  return nodeRequestOf(c) && typeof outgoing?.setHeader === 'function' ? (outgoing as ServerResponse) : undefined;
};
