// Validates the OpenAPI document on standard input with @seriousme/openapi-schema-validator (the JSON Schema of its
// OpenAPI version, and every $ref resolved) and prints {"valid", "version", "errors"} as one JSON line. A script of
// its own because the validator is ESM only and the tests run as CommonJS under Jest: openapi.test.ts runs it with
// Node.
import { Validator } from '@seriousme/openapi-schema-validator';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const validator = new Validator();
const result = await validator.validate(JSON.parse(Buffer.concat(chunks).toString('utf8')));
process.stdout.write(`${JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors ?? null })}\n`);
