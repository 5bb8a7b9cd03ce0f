// The types a plugin's author sees, checked by tsc (tsconfig.json includes this file): handlers'
// arguments are worked out from the declarations, and mistakes in them are type errors. Running
// it (`node --test` does) only declares the plugin.

import { z } from 'zod';
import { Plugin, text } from '../index.js';

const plugin = new Plugin()
  .tool(
    {
      name: 'compact',
      input: {
        name: 'string',
        nick: 'string?',
        count: { type: 'integer', default: 1 },
        mode: { enum: ['fast', 'slow'] },
        tags: { type: 'array', items: 'string' },
        where: { type: 'object', properties: { city: 'string', zip: 'string?' } },
      },
    },
    (args) => {
      /** @type {{ name: string, nick?: string, count: number, mode: 'fast' | 'slow', tags: string[], where: { city: string, zip?: string } }} */
      const expected = args;
      /** @type {typeof expected} */
      const same = args;
      return text(same.name);
    },
  )
  .tool({ name: 'zod', input: z.object({ at: z.string().transform((day) => new Date(day)) }) }, ({ at }) => {
    /** @type {Date} */
    const date = at;
    return date.toISOString();
  })
  .tool({ name: 'none' }, (args) => {
    /** @type {{ [key: string]: unknown }} */
    const object = args;
    return object;
  })
  .resourceTemplate({ uriTemplate: 'notes://{folder}/{+path}', name: 'note', complete: { folder: ['inbox'] } }, ({ folder, path }) => `${folder}/${path}`)
  .prompt({ name: 'review', arguments: { code: 'The code', language: { optional: true } } }, ({ code, language }) => {
    /** @type {string} */
    const required = code;
    /** @type {string | undefined} */
    const optional = language;
    return `${optional}: ${required}`;
  });

export const { tools, resources, prompts, completion } = plugin.exports();

/** Never called: each declaration below is a type error. */
export function mistakes() {
  // @ts-expect-error: not a type name
  plugin.tool({ name: 'a', input: { n: 'int' } }, () => '');
  plugin.tool({ name: 'b', input: { n: 'integer?' } }, ({ n }) => {
    /** @type {number} */
    // @ts-expect-error: an optional field may be missing
    const value = n;
    return value;
  });
  plugin.tool({ name: 'c', input: z.object({ n: z.number() }) }, ({ n }) => {
    /** @type {string} */
    // @ts-expect-error: zod's output type
    const value = n;
    return value;
  });
  // @ts-expect-error: hints are booleans
  plugin.tool({ name: 'd', readOnly: 'yes' }, () => '');
  // @ts-expect-error: not a variable of the template
  plugin.resourceTemplate({ uriTemplate: 'x://{a}', name: 'x', complete: { b: [] } }, ({ a }) => a);
}
