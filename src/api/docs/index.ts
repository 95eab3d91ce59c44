import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Hono } from 'hono';
import type { AppEnv } from '../request-context.js';

const require = createRequire(import.meta.url);
const assetsDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));

const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>ledgergate API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body></html>`;

const init = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });`;

const assets: Record<string, string> = { 'swagger-ui.css': 'text/css', 'swagger-ui-bundle.js': 'text/javascript' };
const cache = new Map<string, string>();

/** /docs renders /openapi.json with Swagger UI served from the installed package: no CDN, works offline. */
export const docsRoutes = () =>
  new Hono<AppEnv>()
    .get('/docs', (c) => c.html(page))
    .get('/docs/assets/init.js', (c) => c.body(init, 200, { 'content-type': 'text/javascript; charset=utf-8' }))
    .get('/docs/assets/:file', async (c) => {
      const file = c.req.param('file');
      const type = assets[file];
      if (!type) return c.notFound();
      let content = cache.get(file);
      if (content === undefined) {
        content = await readFile(path.join(assetsDir, file), 'utf8');
        cache.set(file, content);
      }
      return c.body(content, 200, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'public, max-age=86400' });
    });
