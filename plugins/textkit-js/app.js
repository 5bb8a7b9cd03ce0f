// textkit, a Palisade plugin written in JavaScript: a few text tools, a resource, a resource
// template and a prompt. Build it with the JavaScript SDK:
//
//   node sdk-guest/js/bin/palisade-js.mjs build plugins/textkit-js/app.js -o textkit-js.wasm
//
// (plugins/build.sh builds it into target/plugins/). plugins/textkit-py is the same plugin in Python.

import { Plugin, ToolError, host, fs } from '@palisade/sdk';

const plugin = new Plugin();

plugin.tool(
  {
    name: 'greet',
    description: 'Say hello to someone',
    input: {
      name: { type: 'string', description: 'Who to greet' },
      excited: { type: 'boolean', description: 'Add exclamation marks', default: false },
    },
    readOnly: true,
  },
  ({ name, excited }) => {
    host.log('info', `greeting ${name}`);
    return excited ? `Hello, ${name}!!!` : `Hello, ${name}!`;
  },
);

plugin.tool(
  {
    name: 'word_count',
    description: 'Count the lines, words and characters of a text file',
    input: { path: { type: 'string', description: 'The file to count, such as /data/notes.txt' } },
    output: {
      lines: { type: 'integer', description: 'Lines, as Python\'s str.splitlines counts them' },
      words: { type: 'integer', description: 'Runs of non-whitespace characters' },
      characters: { type: 'integer', description: 'Unicode code points' },
    },
    readOnly: true,
  },
  ({ path }) => {
    let text;
    try {
      text = fs.readText(path);
    } catch (error) {
      throw new ToolError(`cannot read ${path}: ${error.message}`);
    }
    return { lines: countLines(text), words: countWords(text), characters: [...text].length };
  },
);

plugin.tool(
  {
    name: 'count_primes',
    description: 'Count the prime numbers below a bound, slowly (by trial division)',
    input: { below: { type: 'integer', description: 'The bound (exclusive)' } },
    readOnly: true,
    // A large bound takes minutes: for a client that can run tasks, the call runs as one, and
    // its progress shows in the task's status.
    taskSupport: 'optional',
  },
  ({ below }) => {
    let count = 0;
    const step = Math.max(Math.floor(below / 10), 1);
    for (let n = 2; n < below; n++) {
      if (n % step === 0) host.reportProgress(n, below, `${count} primes below ${n}`);
      let prime = true;
      for (let d = 2; d * d <= n; d++) {
        if (n % d === 0) {
          prime = false;
          break;
        }
      }
      if (prime) count++;
    }
    return count;
  },
);

plugin.resource(
  { uri: 'textkit-js://about', name: 'about', mimeType: 'text/plain' },
  () => 'textkit, a Palisade plugin written in JavaScript',
);

plugin.resourceTemplate(
  { uriTemplate: 'textkit-js://upper/{text}', name: 'upper', description: 'The text, upper-cased', mimeType: 'text/plain' },
  ({ text }) => text.toUpperCase(),
);

plugin.prompt(
  {
    name: 'summarize',
    description: 'Summarize a file',
    arguments: {
      path: 'The file to summarize',
      style: { description: 'short or detailed', optional: true, complete: ['short', 'detailed'] },
    },
  },
  ({ path, style = 'short' }) => `Summarize the file ${path} in a ${style} style.`,
);

// Lines and words as the Python twin counts them (str.splitlines, str.split) for ordinary text.
function countLines(text) {
  if (text === '') return 0;
  const lines = text.split(/\r\n|\n|\r/).length;
  return /[\r\n]$/.test(text) ? lines - 1 : lines;
}

function countWords(text) {
  return text.split(/\s+/).filter((word) => word !== '').length;
}

export const { tools, resources, prompts, completion } = plugin.exports();
