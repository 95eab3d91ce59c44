import { expect } from 'vitest';
import type { ServiceProcess } from './service-process.js';

/** A call to a `serve` process with an API key; its JSON answer, the test failed on a status of 300 or more (naming the call and the answer). */
export const callWithKey = async (service: ServiceProcess, apiKey: string, method: 'GET' | 'POST', url: string, body?: unknown) => {
  const response = await fetch(`${service.url}${url}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  expect(response.status, `${method} ${url} → ${JSON.stringify(answer)}`).toBeLessThan(300);
  return answer;
};
