// RFC 6570 URI templates, the part resource templates need: `{var}` (simple expansion) and
// `{+var}` (reserved expansion), matched against a URI to get the variables' values back.

/** RFC 3986 reserved characters: a `{var}` value never contains them unencoded. */
const RESERVED = new Set(':/?#[]@!$&\'()*+,;=');

const NAME = /^[A-Za-z0-9_.]+$/;

/**
 * A piece of a template: literal text, or a variable (`reserved` for `{+name}`).
 * @typedef {{ literal: string, name?: undefined } | { name: string, reserved: boolean, literal?: undefined }} Part
 */

/** A parsed URI template: literal text and `{name}` / `{+name}` variables. */
export class UriTemplate {
  /**
   * Parses `template`. Throws on what the SDK cannot match: other operators (`{?q}`, `{/p}`),
   * lists (`{a,b}`), modifiers (`{p*}`, `{p:3}`), a variable used twice, two variables with
   * nothing between them, unbalanced braces.
   *
   * @param {string} template
   */
  constructor(template) {
    if (typeof template !== 'string') {
      throw new TypeError('a URI template must be a string');
    }
    this.template = template;
    /** @type {Part[]} */
    this.parts = [];
    let rest = template;
    while (rest.length > 0) {
      const open = rest.search(/[{}]/);
      if (open < 0) {
        this.parts.push({ literal: rest });
        break;
      }
      if (rest[open] === '}') {
        throw new Error('a `}` without its `{`');
      }
      if (open > 0) {
        this.parts.push({ literal: rest.slice(0, open) });
      }
      const close = rest.indexOf('}', open);
      if (close < 0) {
        throw new Error('a `{` without its `}`');
      }
      const expression = rest.slice(open + 1, close);
      const reserved = expression.startsWith('+');
      const name = reserved ? expression.slice(1) : expression;
      if (!NAME.test(name)) {
        throw new Error(`\`{${expression}}\`: the SDK matches only \`{name}\` and \`{+name}\`, names made of A-Z a-z 0-9 _ .`);
      }
      if (this.variables.includes(name)) {
        throw new Error(`the variable \`${name}\` appears twice`);
      }
      if (this.parts.length > 0 && this.parts.at(-1)?.name !== undefined) {
        throw new Error(`\`{${expression}}\` follows another variable directly: put a literal between them`);
      }
      this.parts.push({ name, reserved });
      rest = rest.slice(close + 1);
    }
  }

  /**
   * The names of the variables, in order.
   * @returns {string[]}
   */
  get variables() {
    return this.parts.flatMap((part) => (part.name === undefined ? [] : [part.name]));
  }

  /**
   * The variables' values, percent-decoded, if `uri` is an expansion of the template; otherwise
   * `undefined`. Every variable matches at least one character: `{var}` none of the RFC 3986
   * reserved ones (so not `/`, `?`, `#`), `{+var}` any. Where a URI can match in several ways,
   * earlier variables take as much as they can.
   *
   * @param {string} uri
   * @returns {{ [name: string]: string } | undefined}
   */
  match(uri) {
    /** @type {[string, string][]} */
    const raw = [];
    if (!matchParts(this.parts, 0, uri, 0, raw)) {
      return undefined;
    }
    /** @type {{ [name: string]: string }} */
    const values = {};
    for (const [name, value] of raw) {
      const decoded = percentDecode(value);
      if (decoded === undefined) {
        return undefined;
      }
      values[name] = decoded;
    }
    return values;
  }
}

/**
 * Backtracking match of `parts[i..]` against `uri[at..]`; `values` gets the raw values.
 *
 * @param {Part[]} parts
 * @param {number} i
 * @param {string} uri
 * @param {number} at
 * @param {[string, string][]} values
 * @returns {boolean}
 */
function matchParts(parts, i, uri, at, values) {
  if (i === parts.length) {
    return at === uri.length;
  }
  const part = parts[i];
  if (part.literal !== undefined) {
    return uri.startsWith(part.literal, at) && matchParts(parts, i + 1, uri, at + part.literal.length, values);
  }
  let longest = uri.length;
  if (!part.reserved) {
    for (let j = at; j < uri.length; j++) {
      if (RESERVED.has(uri[j])) {
        longest = j;
        break;
      }
    }
  }
  for (let end = longest; end > at; end--) {
    if (splitsPair(uri, end)) {
      continue;
    }
    values.push([part.name, uri.slice(at, end)]);
    if (matchParts(parts, i + 1, uri, end, values)) {
      return true;
    }
    values.pop();
  }
  return false;
}

/**
 * Whether cutting `text` at `index` would split a surrogate pair (one non-BMP character).
 *
 * @param {string} text
 * @param {number} index
 */
function splitsPair(text, index) {
  const before = text.charCodeAt(index - 1);
  const after = text.charCodeAt(index);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const ENCODER = new TextEncoder();

/**
 * Decodes `%XX` escapes; `undefined` for a malformed escape or bytes that are not UTF-8.
 *
 * @param {string} raw
 * @returns {string | undefined}
 */
export function percentDecode(raw) {
  if (!raw.includes('%')) {
    return raw;
  }
  const bytes = [];
  for (let i = 0; i < raw.length; ) {
    if (raw[i] === '%') {
      const hex = raw.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) {
        return undefined;
      }
      bytes.push(parseInt(hex, 16));
      i += 3;
    } else {
      const codePoint = /** @type {number} i is inside raw */ (raw.codePointAt(i));
      const char = String.fromCodePoint(codePoint);
      bytes.push(...ENCODER.encode(char));
      i += char.length;
    }
  }
  try {
    return STRICT_UTF8.decode(new Uint8Array(bytes));
  } catch {
    return undefined;
  }
}

/**
 * Percent-encodes `value` for a `{var}` in a URI: everything but the RFC 3986 unreserved
 * characters (`A-Z a-z 0-9 - . _ ~`) becomes `%XX`, so the URI matches the template again.
 *
 * @param {unknown} value
 * @returns {string}
 */
export function percentEncode(value) {
  let out = '';
  for (const byte of ENCODER.encode(String(value))) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
