// Tool schemas from a schema library (zod, Valibot, ArkType...) through Standard Schema
// (https://standardschema.dev): such a schema is recognized by its `~standard` property, tells
// the client its JSON Schema through the Standard JSON Schema extension (`~standard.jsonSchema`),
// and checks the arguments with its own `~standard.validate`. The SDK imports no schema library.

import { SchemaError } from './schema.js';
import { messageOf } from './errors.js';

/** @import { StandardIssue, StandardSchemaV1 } from './types.js' */

/** The JSON Schema dialect of MCP, which the host validates arguments with. */
const TARGET = 'draft-2020-12';

/**
 * Whether `value` is a Standard Schema (an object or function with a `~standard` property).
 * {@link checkStandardSchema} checks the rest.
 *
 * @param {unknown} value
 * @returns {value is StandardSchemaV1}
 */
export function isStandardSchema(value) {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && '~standard' in value;
}

/**
 * Throws a {@link SchemaError} unless `schema['~standard']` has `version: 1` and `validate`.
 *
 * @param {StandardSchemaV1} schema
 */
export function checkStandardSchema(schema) {
  const standard = schema['~standard'];
  if (standard === null || typeof standard !== 'object' || standard.version !== 1 || typeof standard.validate !== 'function') {
    throw new SchemaError('', 'not a Standard Schema the SDK knows: `~standard` must have `version: 1` and a `validate` function');
  }
}

/**
 * The JSON Schema of what `schema` accepts (`io` is `input`: a tool's arguments) or produces
 * (`output`: its structured content), for the client, from the Standard JSON Schema extension.
 * Without it, a {@link SchemaError} says how to describe the schema otherwise. (zod has it since
 * 4.2; earlier versions have no `toJSONSchema` on the schema either, only `z.toJSONSchema`.)
 *
 * @param {StandardSchemaV1} schema
 * @param {'input' | 'output'} io
 * @returns {unknown}
 */
export function jsonSchemaOf(schema, io) {
  checkStandardSchema(schema);
  const standard = schema['~standard'];
  const library = typeof standard.vendor === 'string' ? `the ${standard.vendor} schema` : 'the schema';
  const convert = standard.jsonSchema?.[io];
  if (typeof convert !== 'function') {
    const instead =
      io === 'input'
        ? 'or give its JSON Schema as `inputSchema` beside `input` (which still checks the arguments)'
        : 'or give its JSON Schema as `outputSchema` in place of `output`';
    throw new SchemaError(
      '',
      `${library} cannot be described as JSON Schema for the client: it implements Standard Schema (\`~standard\`) but not ` +
        `Standard JSON Schema (\`~standard.jsonSchema\`). Use a library that does (zod 4.2 or later, but not zod/mini), ${instead}`,
    );
  }
  try {
    return convert({ target: TARGET });
  } catch (error) {
    throw new SchemaError('', `${library} cannot be described as JSON Schema for the client: ${messageOf(error)}`);
  }
}

/**
 * Checks `value` with the schema's own `~standard.validate` (awaited: it may be async). Returns
 * the schema's output (its defaults and transformations applied) or, when the value is wrong,
 * its issues as one message: `` `where.city`: Required; `count`: Too big ``.
 *
 * @param {StandardSchemaV1} schema
 * @param {unknown} value
 * @returns {Promise<{ value: unknown } | { wrong: string }>}
 */
export async function validate(schema, value) {
  const result = await schema['~standard'].validate(value);
  if (result.issues) {
    const messages = result.issues.map(describeIssue);
    return { wrong: messages.length > 0 ? messages.join('; ') : 'the schema refused them' };
  }
  return { value: result.value };
}

/**
 * @param {StandardIssue} issue
 * @returns {string}
 */
function describeIssue(issue) {
  let path = '';
  for (const segment of issue.path ?? []) {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    path += typeof key === 'number' ? `[${key}]` : `${path === '' ? '' : '.'}${String(key)}`;
  }
  return path === '' ? issue.message : `\`${path}\`: ${issue.message}`;
}
