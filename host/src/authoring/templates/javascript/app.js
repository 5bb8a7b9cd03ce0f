// {{name}}: a Palisade plugin.
import { Plugin } from '@palisade/sdk';

const plugin = new Plugin();

plugin.tool(
  {
    name: 'greet',
    description: 'Say hello to someone',
    input: { name: { type: 'string', description: 'Who to greet' } },
    readOnly: true,
  },
  ({ name }) => `Hello, ${name}!`,
);

export const { tools, resources, prompts, completion } = plugin.exports();
