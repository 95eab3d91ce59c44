import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { apiDocument } from '../src/api/api-document.js';

export const CLIENT_SCHEMA_FILE = fileURLToPath(new URL('../src/client/schema.ts', import.meta.url));

const HEADER = "// Generated from the service's OpenAPI document by `npm run client:generate`: do not edit.\n\n";

/** The TypeScript types of every path, operation and schema of the API document. */
export const clientSchemaSource = async (): Promise<string> => {
  const document = await apiDocument();
  const ast = await openapiTS(document as Parameters<typeof openapiTS>[0]);
  return HEADER + astToString(ast);
};
