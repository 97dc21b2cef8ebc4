// Turns the OpenAPI document on standard input into TypeScript types with openapi-typescript's Node API (openapiTS,
// then astToString) and prints them. A script of its own because openapi-typescript loads ESM-only packages and the
// tests run as CommonJS under Jest: openapi-typed-client.test.ts runs it with Node.
import openapiTS, { astToString } from 'openapi-typescript';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
process.stdout.write(astToString(await openapiTS(JSON.parse(Buffer.concat(chunks).toString('utf8')))));
