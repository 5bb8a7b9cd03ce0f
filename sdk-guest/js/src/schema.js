// JSON Schemas for tool arguments and structured output, from a compact declaration.
//
//   { name: 'string',                                  // required
//     nickname: 'string?',                             // optional
//     count: { type: 'integer', description: 'How many', optional: true, default: 1 },
//     tags: { type: 'array', items: 'string' },
//     where: { type: 'object', properties: { city: 'string' } } }
//
// becomes an object schema whose `required` lists the fields that are neither optional nor
// given a default.

/** @import { Field, FieldObject, FieldType, Fields, JsonObject, JsonSchema } from './types.js' */

const TYPES = ['string', 'number', 'integer', 'boolean', 'array', 'object'];

/** JSON Schema keywords a field may carry besides `type`, passed through as they are. */
const KEYWORDS = new Set([
  'title', 'description', 'default', 'enum', 'const', 'examples', 'format', 'pattern',
  'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'multipleOf', 'minItems', 'maxItems', 'uniqueItems', 'additionalProperties',
  'minProperties', 'maxProperties',
]);

/** The SDK's own keys on a field: not JSON Schema, removed from the output. */
const OWN_KEYS = new Set(['type', 'optional', 'required', 'items', 'properties', 'header']);

/** A mistake in a declaration, with the path of the field it is about. */
export class SchemaError extends Error {
  /**
   * @param {string} path
   * @param {string} message
   */
  constructor(path, message) {
    super(path ? `\`${path}\`: ${message}` : message);
    this.name = 'SchemaError';
  }
}

/**
 * The JSON Schema of an object whose properties are declared by `fields`, in the compact form
 * above. Throws a {@link SchemaError} naming the bad field.
 *
 * @param {Fields} fields
 * @param {string} [path] Where `fields` are, for messages.
 * @returns {JsonSchema}
 */
export function objectSchema(fields, path = '') {
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) {
    throw new SchemaError(path, `expected an object of fields, not ${kind(fields)}`);
  }
  /** @type {{ [name: string]: JsonSchema }} */
  const properties = {};
  /** @type {string[]} */
  const required = [];
  for (const [name, spec] of Object.entries(fields)) {
    const at = path ? `${path}.${name}` : name;
    const { schema, optional } = fieldSchema(spec, at);
    properties[name] = schema;
    if (!optional) {
      required.push(name);
    }
  }
  /** @type {JsonSchema} */
  const schema = { type: 'object', properties };
  if (required.length > 0) {
    schema.required = required;
  }
  return schema;
}

/**
 * One field: its schema, and whether it may be left out.
 *
 * @param {Field} spec
 * @param {string} path
 * @returns {{ schema: JsonSchema, optional: boolean }}
 */
function fieldSchema(spec, path) {
  if (typeof spec === 'string') {
    const optional = spec.endsWith('?');
    const type = optional ? spec.slice(0, -1) : spec;
    checkType(type, path);
    return { schema: { type }, optional };
  }
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new SchemaError(path, `expected a type name such as 'string' or an object such as { type: 'string' }, not ${kind(spec)}`);
  }
  for (const key of Object.keys(spec)) {
    if (!KEYWORDS.has(key) && !OWN_KEYS.has(key)) {
      throw new SchemaError(path, `unknown key \`${key}\` (use optional, items, properties, header or a JSON Schema keyword: ${[...KEYWORDS].join(', ')})`);
    }
  }
  /** @type {JsonSchema} */
  const schema = {};
  if (spec.type !== undefined) {
    checkType(spec.type, path);
    schema.type = spec.type;
  } else if (spec.enum === undefined && spec.const === undefined) {
    throw new SchemaError(path, `no \`type\` (one of ${TYPES.join(', ')})`);
  }
  for (const [key, value] of Object.entries(spec)) {
    if (KEYWORDS.has(key)) {
      schema[key] = value;
    }
  }
  if (spec.enum !== undefined && (!Array.isArray(spec.enum) || spec.enum.length === 0)) {
    throw new SchemaError(path, '`enum` must be a non-empty array');
  }
  if (spec.items !== undefined) {
    if (spec.type !== 'array') {
      throw new SchemaError(path, '`items` is for `type: \'array\'`');
    }
    schema.items = fieldSchema(spec.items, `${path}[]`).schema;
  }
  if (spec.properties !== undefined) {
    if (spec.type !== 'object') {
      throw new SchemaError(path, '`properties` is for `type: \'object\'`');
    }
    Object.assign(schema, objectSchema(spec.properties, path));
  }
  if (spec.header !== undefined) {
    schema['x-mcp-header'] = headerName(spec.header, spec.type, path);
  }
  const optional = fieldOptional(spec, path);
  return { schema, optional };
}

/**
 * @param {FieldObject} spec
 * @param {string} path
 */
function fieldOptional(spec, path) {
  if (spec.optional !== undefined && typeof spec.optional !== 'boolean') {
    throw new SchemaError(path, '`optional` must be true or false');
  }
  if (spec.required !== undefined && typeof spec.required !== 'boolean' && !Array.isArray(spec.required)) {
    throw new SchemaError(path, '`required` must be true or false');
  }
  if (Array.isArray(spec.required)) {
    throw new SchemaError(path, 'give nested fields with `properties` (their `required` list is derived)');
  }
  if (spec.optional === true && spec.required === true) {
    throw new SchemaError(path, 'both `optional` and `required`');
  }
  return spec.optional === true || spec.required === false || spec.default !== undefined;
}

/**
 * @param {unknown} type
 * @param {string} path
 * @returns {asserts type is FieldType}
 */
function checkType(type, path) {
  if (!TYPES.includes(/** @type {FieldType} */ (type))) {
    throw new SchemaError(path, `unknown type ${JSON.stringify(type)} (use one of ${TYPES.join(', ')}; add '?' for an optional field, as in 'string?')`);
  }
}

/** RFC 9110 `tchar`: what an HTTP field name is made of. */
const TOKEN = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;

/** Checks a field mirrored into `Mcp-Param-{header}` (MCP 2026-07-28, `x-mcp-header`). */
/**
 * @param {unknown} header
 * @param {FieldType | undefined} type
 * @param {string} path
 */
function headerName(header, type, path) {
  if (typeof header !== 'string' || !TOKEN.test(header)) {
    throw new SchemaError(path, `cannot mirror into a header: ${JSON.stringify(header)} is not an HTTP field name (use letters, digits and !#$%&'*+-.^_\`|~)`);
  }
  if (type === undefined || !['string', 'integer', 'boolean'].includes(type)) {
    throw new SchemaError(path, `cannot mirror into a header: its type is ${JSON.stringify(type ?? 'not given')}, not one of string, integer, boolean`);
  }
  return header;
}

/**
 * Throws when two fields of `schema` are mirrored into one header (case aside).
 *
 * @param {JsonSchema} schema
 */
export function checkHeaders(schema) {
  /** @type {Map<string, string>} */
  const seen = new Map();
  /**
   * @param {JsonSchema | undefined} node
   * @param {string} path
   */
  const walk = (node, path) => {
    for (const [name, property] of Object.entries(/** @type {{ [name: string]: JsonSchema } | undefined} */ (node?.properties) ?? {})) {
      const at = path ? `${path}.${name}` : name;
      const header = property?.['x-mcp-header'];
      if (typeof header === 'string') {
        const other = seen.get(header.toLowerCase());
        if (other !== undefined) {
          throw new SchemaError(at, `cannot mirror into the header \`${header}\`: \`${other}\` is mirrored into it already (header names are compared without case)`);
        }
        seen.set(header.toLowerCase(), at);
      }
      walk(property, at);
    }
  };
  walk(schema, '');
}

/**
 * A full JSON Schema given as it is (`inputSchema`, `outputSchema`): checked to describe an object.
 *
 * @param {unknown} schema
 * @returns {JsonSchema}
 */
export function checkObjectSchema(schema) {
  if (!isObject(schema)) {
    throw new SchemaError('', `a JSON Schema must be an object, not ${kind(schema)}`);
  }
  if (schema.type === undefined) {
    return { ...schema, type: 'object' };
  }
  if (schema.type !== 'object') {
    throw new SchemaError('', `the schema must describe a JSON object, but has "type": ${JSON.stringify(schema.type)}`);
  }
  return schema;
}

/**
 * Checks the arguments of a call against a schema made by {@link objectSchema} and fills in the
 * defaults of missing fields. The host validates every call against the schema already; this
 * catches what slips through and gives handlers their defaults. Returns an error message, or
 * undefined when the arguments are fine.
 *
 * @param {JsonSchema} schema
 * @param {JsonObject} args Changed in place.
 * @returns {string | undefined}
 */
export function prepareArguments(schema, args) {
  for (const name of /** @type {string[] | undefined} */ (schema.required) ?? []) {
    if (args[name] === undefined) {
      return `missing field \`${name}\``;
    }
  }
  for (const [name, property] of Object.entries(/** @type {{ [name: string]: JsonSchema } | undefined} */ (schema.properties) ?? {})) {
    const value = args[name];
    if (value === undefined) {
      if (property.default !== undefined) {
        const fallback = property.default;
        // A copy, so a handler that changes it cannot change the next call's default.
        args[name] = typeof fallback === 'object' && fallback !== null ? structuredClone(fallback) : fallback;
      }
      continue;
    }
    if (typeof property.type === 'string' && !hasType(value, property.type)) {
      return `\`${name}\` must be ${article(property.type)}, not ${kind(value)}`;
    }
  }
  return undefined;
}

/**
 * @param {unknown} value
 * @param {string} type
 */
function hasType(value, type) {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    default:
      return true;
  }
}

/** @param {string} type */
function article(type) {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/**
 * Whether `value` is an object that is not an array (nor null).
 *
 * @param {unknown} value
 * @returns {value is JsonObject}
 */
export function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * What a value is, for messages: `a string`, `null`, `an array`...
 *
 * @param {unknown} value
 */
export function kind(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Uint8Array) return 'a Uint8Array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'an integer';
  return article(typeof value);
}
