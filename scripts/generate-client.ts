// Writes src/client/schema.ts, the types of the typed client, from the API document the service
// serves. Run it after changing a route: `npm run client:generate`. A test fails while the
// committed file differs from what this writes, so the document, the server and the client
// cannot drift apart.
import fs from 'node:fs/promises';
import { clientSchemaSource, CLIENT_SCHEMA_FILE } from './client-schema.js';

await fs.writeFile(CLIENT_SCHEMA_FILE, await clientSchemaSource());
console.log(`wrote ${CLIENT_SCHEMA_FILE}`);
