import { describe, expect, it } from 'vitest';
import { checkArguments, diffSchemas, schemaHash } from './schema-check.js';

const v1 = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], $schema: 'http://json-schema.org/draft-07/schema#' };
const v2 = { type: 'object', properties: { message: { type: 'string' } }, required: ['message'], additionalProperties: false };

describe('schema checks', () => {
  it('hashes canonically (key order does not matter)', () => {
    expect(schemaHash({ a: 1, b: [1, 2] })).toBe(schemaHash({ b: [1, 2], a: 1 }));
    expect(schemaHash(v1)).not.toBe(schemaHash(v2));
  });

  it('validates arguments against draft-07 and 2020-12 schemas', () => {
    expect(checkArguments(v1, { text: 'x' })).toEqual({ valid: true });
    expect(checkArguments(v2, { text: 'x' })).toMatchObject({ valid: false });
    const draft2020 = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
    expect(checkArguments(draft2020, { n: 1 })).toEqual({ valid: true });
    expect(checkArguments(draft2020, {})).toMatchObject({ valid: false });
  });

  it('describes what changed', () => {
    expect(diffSchemas(v1, v2)).toEqual([
      '- $schema',
      '+ additionalProperties: false',
      '+ properties.message: {"type":"string"}',
      '- properties.text',
      '~ required: ["text"] → ["message"]',
    ]);
  });
});
