// The plugin as a whole: what it offers, and its implementation of the WIT exports.

import { NotFound, InvalidParams, ToolError, toPluginError, reportUnexpected, describe, messageOf } from './errors.js';
import { objectSchema, checkObjectSchema, checkHeaders, prepareArguments, SchemaError, kind, isObject } from './schema.js';
import { isStandardSchema, checkStandardSchema, jsonSchemaOf, validate } from './standard-schema.js';
import { UriTemplate } from './template.js';
import { ToolResult, toToolResult, toContents, toPromptResult, text, json, size, annotations, icons, contents } from './content.js';
import { UI_MIME_TYPE, uiUri, viewMeta, toolMeta } from './ui.js';
import { toCompleter, runCompleter } from './completion.js';

/**
 * @import { Completer, CompletionRef, CompletionResult, Fields, JsonObject, ListedPrompt, ListedPromptArgument,
 *   ListedResource, ListedTemplate, ListedTool, PluginExports, PromptArgs, PromptArguments, PromptHandler, PromptReturn,
 *   PromptSpec, ResourceContents, ResourceLister, ResourceReader, ResourceReturn, ResourceSpec, SchemaLike, TemplateReader,
 *   TemplateSpec, TemplateVars, ToolArgs, ToolHandler, ToolReturn, ToolSpec, UiViewSpec, WitCallResult, WitPromptResult } from './types.js'
 */

/**
 * A declared tool: `check` validates the arguments (giving the handler's value, or why they are
 * wrong), `run` is the handler.
 * @typedef {object} Tool
 * @property {(args: JsonObject) => CheckedArgs | Promise<CheckedArgs>} check
 * @property {(args: unknown) => ToolReturn | Promise<ToolReturn>} run
 * @property {ListedTool} listed
 */

/** @typedef {{ value: unknown } | { wrong: string }} CheckedArgs */

/** @typedef {{ [name: string]: Completer }} Completers */

/**
 * @typedef {object} Template
 * @property {UriTemplate} parsed
 * @property {(vars: unknown, uri: string) => ResourceReturn | Promise<ResourceReturn>} read
 * @property {Completers} completers
 * @property {string | undefined} mimeType
 * @property {ListedTemplate} listed
 */

/**
 * @typedef {object} Prompt
 * @property {(args: unknown) => PromptReturn | Promise<PromptReturn>} get
 * @property {Completers} completers
 * @property {ListedPrompt} listed
 */

/** What the WIT contract allows in a tool name. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const TOOL_KEYS = ['name', 'title', 'description', 'input', 'inputSchema', 'output', 'outputSchema', 'readOnly', 'destructive', 'idempotent', 'openWorld', 'taskSupport', 'ui', 'icons', 'meta'];
const VIEW_KEYS = ['uri', 'name', 'title', 'description', 'csp', 'permissions', 'domain', 'prefersBorder', 'icons', 'meta'];
/** What a tool's `taskSupport` may be (MCP `execution.taskSupport`). */
const TASK_SUPPORT = ['forbidden', 'optional', 'required'];
const RESOURCE_KEYS = ['uri', 'name', 'title', 'description', 'mimeType', 'size', 'annotations', 'icons', 'meta', 'file'];
const TEMPLATE_KEYS = ['uriTemplate', 'name', 'title', 'description', 'mimeType', 'annotations', 'icons', 'meta', 'complete'];
const PROMPT_KEYS = ['name', 'title', 'description', 'arguments', 'icons', 'meta', 'complete'];
const ARGUMENT_KEYS = ['description', 'title', 'optional', 'required', 'complete'];

/** A mistake in the plugin's definition. */
export class DefinitionError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'DefinitionError';
  }
}

/**
 * Everything a plugin offers. Declare tools, resources, resource templates and prompts with the
 * methods below (each returns the plugin, so calls chain), then export the WIT interfaces:
 *
 *     export const { tools, resources, prompts, completion } = plugin.exports();
 *
 * Declarations run once, when the component is built: a mistake in one (a bad name, a field of
 * an unknown type, two tools with one name) throws a {@link DefinitionError} there, so the build
 * fails with a message naming the tool and the field.
 */
/** The key of what a plugin defines, on each of its exports (see `Plugin#exports`). */
export const DEFINITIONS = Symbol.for('palisade.sdk.definitions');

export class Plugin {
  /** @type {Map<string, Tool>} */
  #tools = new Map();
  /** @type {Map<string, { info: ListedResource, read: ResourceReader }>} */
  #resources = new Map();
  /** @type {ResourceLister[]} */
  #listers = [];
  /** @type {Map<string, Template>} */
  #templates = new Map();
  /** @type {Map<string, Prompt>} */
  #prompts = new Map();

  /**
   * Declares a tool. `spec`:
   *
   * - `name` (1 to 64 of `A-Z a-z 0-9 _ -`), `title`, `description`;
   * - `input`: the arguments, in the compact form (`{ name: 'string', count: 'integer?' }`, see
   *   the README) or as a Standard Schema (a zod schema, say: `z.object({ name: z.string() })`);
   *   or `inputSchema`: a full JSON Schema object, passed on as it is; neither means no
   *   arguments. A Standard Schema validates the arguments itself, and describes itself to the
   *   client through Standard JSON Schema (or `inputSchema`, given beside it);
   * - `output` (compact form or Standard Schema) or `outputSchema`: the schema of the
   *   structured content;
   * - hints: `readOnly`, `destructive`, `idempotent`, `openWorld` (booleans);
   * - `taskSupport`: whether a call may run as a task, detached from its request under the
   *   plugin's task limits: `'forbidden'` (the default), `'optional'` (a task whenever the
   *   client can run one: for a tool that may take minutes) or `'required'`;
   * - `ui`: its MCP Apps view, shown by hosts that can with the tool's results: the view's
   *   `ui://` URI, or `{ resourceUri, visibility }` (`visibility`: `['model', 'app']`, the
   *   default, or one of them; `['app']` keeps the tool from the model). See {@link Plugin#uiView};
   * - `icons`, `meta`.
   *
   * `handler(args)` gets the arguments (defaults filled in; a Standard Schema's output) and
   * returns the result: a string, a plain object (structured content), a content block,
   * `toolResult({...})`... Throw a `ToolError` for a failure the model should read. It may be
   * async.
   *
   * @template {SchemaLike | undefined} [const I=undefined]
   * @param {ToolSpec<I>} spec
   * @param {ToolHandler<ToolArgs<I>>} handler
   * @returns {this}
   */
  tool(spec, handler) {
    const where = `tool \`${spec?.name}\``;
    checkSpec(spec, TOOL_KEYS, where);
    if (typeof spec.name !== 'string' || !TOOL_NAME.test(spec.name)) {
      throw new DefinitionError(`tool name ${JSON.stringify(spec.name)} is not 1 to 64 characters of A-Z a-z 0-9 _ -`);
    }
    if (this.#tools.has(spec.name)) {
      throw new DefinitionError(`two tools are named \`${spec.name}\``);
    }
    checkHandler(handler, where);
    const taskSupport = spec.taskSupport ?? 'forbidden';
    if (!TASK_SUPPORT.includes(taskSupport)) {
      throw new DefinitionError(`${where}: taskSupport must be one of ${TASK_SUPPORT.join(', ')}, not ${JSON.stringify(taskSupport)}`);
    }
    const input = /** @type {SchemaLike | undefined} */ (spec.input);
    const standard = isStandardSchema(input) ? input : undefined;
    if (input !== undefined && spec.inputSchema !== undefined && standard === undefined) {
      throw new DefinitionError(`${where}: give either \`input\` or \`inputSchema\`, not both`);
    }
    if (spec.output !== undefined && spec.outputSchema !== undefined) {
      throw new DefinitionError(`${where}: give either \`output\` or \`outputSchema\`, not both`);
    }
    const inputSchema = schemaOf(where, 'input', () => {
      if (standard !== undefined) checkStandardSchema(standard);
      if (spec.inputSchema !== undefined) return checkObjectSchema(spec.inputSchema);
      if (standard !== undefined) return checkObjectSchema(jsonSchemaOf(standard, 'input'));
      return objectSchema(/** @type {Fields | undefined} */ (input) ?? {});
    });
    schemaOf(where, 'input', () => checkHeaders(inputSchema));
    const output = spec.output;
    let outputSchema;
    if (isStandardSchema(output)) {
      outputSchema = schemaOf(where, 'output', () => checkObjectSchema(jsonSchemaOf(output, 'output')));
    } else if (output !== undefined) {
      outputSchema = schemaOf(where, 'output', () => objectSchema(output));
    } else if (spec.outputSchema !== undefined) {
      outputSchema = schemaOf(where, 'output', () => checkObjectSchema(spec.outputSchema));
    }
    const hints = {
      readOnlyHint: hint(spec.readOnly, 'readOnly', where),
      destructiveHint: hint(spec.destructive, 'destructive', where),
      idempotentHint: hint(spec.idempotent, 'idempotent', where),
      openWorldHint: hint(spec.openWorld, 'openWorld', where),
    };
    const hasHints = Object.values(hints).some((value) => value !== undefined);
    /** @type {Tool['check']} */
    let check;
    if (standard !== undefined) {
      check = (args) => validate(standard, args);
    } else if (spec.inputSchema === undefined) {
      check = (args) => {
        const wrong = prepareArguments(inputSchema, args);
        return wrong === undefined ? { value: args } : { wrong };
      };
    } else {
      check = (args) => ({ value: args });
    }
    this.#tools.set(spec.name, {
      check,
      run: (args) => handler(/** @type {ToolArgs<I>} checked by `check` */ (args)),
      listed: {
        name: spec.name,
        title: optionalString(spec.title, 'title', where),
        description: optionalString(spec.description, 'description', where),
        inputSchema: JSON.stringify(inputSchema),
        outputSchema: outputSchema === undefined ? undefined : JSON.stringify(outputSchema),
        annotations: hasHints ? { title: undefined, ...hints } : undefined,
        taskSupport,
        icons: icons(spec.icons),
        meta: json(spec.ui === undefined ? spec.meta : toolMeta(spec.ui, spec.meta, where)),
      },
    });
    return this;
  }

  /**
   * Declares a resource with a fixed URI. `spec`: `uri`, `name`, `title`, `description`,
   * `mimeType`, `size`, `annotations`, `icons`, `meta`, `file` (the path of the file its contents
   * come from, which the host watches). `read(uri)` returns a string (text), a Uint8Array
   * (bytes), or `contents(...)`, one or a list. It may be async.
   *
   * @param {ResourceSpec} spec
   * @param {ResourceReader} read
   * @returns {this}
   */
  resource(spec, read) {
    const where = `resource \`${spec?.uri}\``;
    const info = resourceInfo(spec, where);
    checkHandler(read, where);
    if (this.#resources.has(info.uri)) {
      throw new DefinitionError(`two resources have the URI \`${info.uri}\``);
    }
    this.#resources.set(info.uri, { info, read });
    return this;
  }

  /**
   * Declares an MCP Apps view (the extension `io.modelcontextprotocol/ui`): an HTML page that
   * hosts able to show one render for a tool's results; link a tool to it with the tool's
   * `ui`. `spec`: `uri` (`ui://AUTHORITY/PATH`: the plugin's name as the authority keeps it
   * the plugin's own), `name`, `title`, `description`, `icons`, `meta`, and what the host
   * reads in `_meta.ui`: `csp` (`{ connectDomains, resourceDomains, frameDomains,
   * baseUriDomains }`, lists of origins; none: no network), `permissions` (a list of
   * `camera`, `microphone`, `geolocation`, `clipboardWrite`), `domain`, `prefersBorder`.
   * `render()` returns the page: one self-contained HTML document (inline scripts and styles).
   * It may be async.
   *
   * @param {UiViewSpec} spec
   * @param {() => string | Promise<string>} render
   * @returns {this}
   */
  uiView(spec, render) {
    const where = `view \`${spec?.uri}\``;
    checkSpec(spec, VIEW_KEYS, where);
    checkHandler(render, where);
    const uri = uiUri(spec.uri, where);
    const ui = viewMeta(spec, where);
    return this.resource(
      {
        uri,
        name: spec.name,
        title: spec.title,
        description: spec.description,
        mimeType: UI_MIME_TYPE,
        icons: spec.icons,
        meta: { ...(spec.meta ?? {}), ui },
      },
      async () => {
        const page = await render();
        if (typeof page !== 'string') {
          throw new TypeError(`${where}: render() returned ${typeof page}, not the page's HTML`);
        }
        return contents(uri, page, { mimeType: UI_MIME_TYPE, meta: { ui } });
      },
    );
  }

  /**
   * Declares a function that lists resources when the client asks, for resources that come and
   * go (the files in a directory, say). It returns a list of resource descriptions, with the
   * keys of {@link Plugin#resource}'s `spec`; each is read by the first resource template its
   * URI matches (`percentEncode` builds URIs that match). Listed after the fixed resources; a
   * URI listed already is left out.
   *
   * @param {ResourceLister} list
   * @returns {this}
   */
  resourceLister(list) {
    checkHandler(list, 'resource lister');
    this.#listers.push(list);
    return this;
  }

  /**
   * Declares a family of resources named by an RFC 6570 URI template, such as
   * `notes://{name}` (`{var}`: no `/ ? #` and other reserved characters; `{+var}`: anything).
   * `spec`: `uriTemplate`, `name`, `title`, `description`, `mimeType`, `annotations`, `icons`,
   * `meta`, `complete` (`{ variable: ['a', 'b'] | (typed, context) => values }`).
   * `read(vars, uri)` gets the variables' values, percent-decoded; throw `NotFound` for values
   * that name nothing. It returns what a resource's `read` does.
   *
   * @template {string} T
   * @param {TemplateSpec<T>} spec
   * @param {TemplateReader<T>} read
   * @returns {this}
   */
  resourceTemplate(spec, read) {
    const where = `resource template \`${spec?.uriTemplate}\``;
    checkSpec(spec, TEMPLATE_KEYS, where);
    if (typeof spec.uriTemplate !== 'string') {
      throw new DefinitionError(`a resource template needs a \`uriTemplate\` (a string), got ${kind(spec.uriTemplate)}`);
    }
    requireString(spec.name, 'name', where);
    checkHandler(read, where);
    let parsed;
    try {
      parsed = new UriTemplate(spec.uriTemplate);
    } catch (error) {
      throw new DefinitionError(`${where}: ${messageOf(error)}`);
    }
    if (this.#templates.has(spec.uriTemplate)) {
      throw new DefinitionError(`two resource templates are \`${spec.uriTemplate}\``);
    }
    const completers = completersOf(spec.complete, parsed.variables, where, 'variable', 'one of its variables');
    this.#templates.set(spec.uriTemplate, {
      parsed,
      read: (vars, uri) => read(/** @type {TemplateVars<T>} the template's variables */ (vars), uri),
      completers,
      mimeType: spec.mimeType,
      listed: {
        uriTemplate: spec.uriTemplate,
        name: spec.name,
        title: optionalString(spec.title, 'title', where),
        description: optionalString(spec.description, 'description', where),
        mimeType: optionalString(spec.mimeType, 'mimeType', where),
        annotations: annotations(spec.annotations),
        icons: icons(spec.icons),
        meta: json(spec.meta),
      },
    });
    return this;
  }

  /**
   * Declares a prompt. `spec`: `name`, `title`, `description`, `icons`, `meta`, and `arguments`:
   * `{ name: 'what it means' }` for a required argument, or `{ name: { description, title,
   * optional: true, complete: ['a', 'b'] | (typed, context) => values } }`.
   * `get(args)` gets the arguments by name (every required one is there) and returns a string
   * (one user message), messages made with `user(...)` / `assistant(...)`, or
   * `promptResult({...})`. It may be async.
   *
   * @template {PromptArguments} [const A={}]
   * @param {PromptSpec<A>} spec
   * @param {PromptHandler<PromptArgs<A>>} get
   * @returns {this}
   */
  prompt(spec, get) {
    const where = `prompt \`${spec?.name}\``;
    checkSpec(spec, PROMPT_KEYS, where);
    requireString(spec.name, 'name', where);
    checkHandler(get, where);
    if (this.#prompts.has(spec.name)) {
      throw new DefinitionError(`two prompts are named \`${spec.name}\``);
    }
    /** @type {PromptArguments} */
    const args = spec.arguments ?? {};
    if (!isObject(args)) {
      throw new DefinitionError(`${where}: \`arguments\` must be an object, name to description or { description, optional, complete }`);
    }
    /** @type {ListedPromptArgument[]} */
    const listedArguments = [];
    /** @type {{ [name: string]: unknown }} */
    const argumentCompleters = {};
    for (const [name, argument] of Object.entries(args)) {
      const at = `${where}: argument \`${name}\``;
      if (typeof argument === 'string') {
        listedArguments.push({ name, title: undefined, description: argument, required: true });
        continue;
      }
      checkSpec(argument, ARGUMENT_KEYS, at);
      if (argument.optional !== undefined && typeof argument.optional !== 'boolean') {
        throw new DefinitionError(`${at}: \`optional\` must be true or false`);
      }
      if (argument.required !== undefined && typeof argument.required !== 'boolean') {
        throw new DefinitionError(`${at}: \`required\` must be true or false`);
      }
      if (argument.optional === true && argument.required === true) {
        throw new DefinitionError(`${at}: both \`optional\` and \`required\``);
      }
      listedArguments.push({
        name,
        title: optionalString(argument.title, 'title', at),
        description: optionalString(argument.description, 'description', at),
        required: !(argument.optional === true || argument.required === false),
      });
      if (argument.complete !== undefined) {
        argumentCompleters[name] = argument.complete;
      }
    }
    const names = listedArguments.map((argument) => argument.name);
    for (const name of Object.keys(spec.complete ?? {})) {
      if (name in argumentCompleters) {
        throw new DefinitionError(`${where}: the argument \`${name}\` is completed twice (in \`arguments\` and in \`complete\`)`);
      }
    }
    const completers = completersOf({ ...argumentCompleters, ...spec.complete }, names, where, 'argument', 'one of its arguments');
    this.#prompts.set(spec.name, {
      get: (values) => get(/** @type {PromptArgs<A>} the required ones checked by #getPrompt */ (values)),
      completers,
      listed: {
        name: spec.name,
        title: optionalString(spec.title, 'title', where),
        description: optionalString(spec.description, 'description', where),
        arguments: listedArguments,
        icons: icons(spec.icons),
        meta: json(spec.meta),
      },
    });
    return this;
  }

  /**
   * The WIT exports: `{ tools, resources, prompts, completion }`. Export them from the app's
   * module, under these names. Every function catches what plugin code throws: a failure becomes
   * the WIT error it stands for, and an unexpected one an `internal` error whose stack goes to
   * the host's log.
   *
   * @returns {PluginExports}
   */
  exports() {
    Plugin.#warmCallPath();
    // What is defined, under a symbol on each interface: `palisade-js build` reads it to refuse
    // a world that would drop definitions. Not part of the WIT exports.
    const definitions = {
      [DEFINITIONS]: () => ({
        tools: [...this.#tools.keys()].map((name) => `tool ${name}`),
        resources: [
          ...[...this.#resources.keys()].map((uri) => `resource ${uri}`),
          ...[...this.#templates.keys()].map((template) => `resource template ${template}`),
          ...this.#listers.map(() => 'resource lister'),
        ],
        prompts: [...this.#prompts.keys()].map((name) => `prompt ${name}`),
      }),
    };
    return {
      tools: {
        ...definitions,
        listTools: () => listing('listing the tools', () => [...this.#tools.values()].map((tool) => tool.listed)),
        callTool: (name, args) => guarded(`tool \`${name}\``, () => this.#callTool(name, args)),
      },
      resources: {
        ...definitions,
        listResources: () => listing('listing the resources', () => this.#listResources()),
        listResourceTemplates: () => listing('listing the resource templates', () => [...this.#templates.values()].map((t) => t.listed)),
        readResource: (uri) => guarded(`reading \`${uri}\``, () => this.#readResource(uri)),
      },
      prompts: {
        ...definitions,
        listPrompts: () => listing('listing the prompts', () => [...this.#prompts.values()].map((prompt) => prompt.listed)),
        getPrompt: (name, args) => guarded(`prompt \`${name}\``, () => this.#getPrompt(name, args)),
      },
      completion: {
        ...definitions,
        completable: () => listing('listing what completes', () => this.#completable()),
        complete: (target, argument, typed, context) =>
          guarded(`completing \`${argument}\``, () => this.#complete(target, argument, typed, context)),
      },
    };
  }

  /**
   * Runs a tool call through the call path once, on a plugin of its own, while the component is
   * built (`exports()` runs then): the snapshot then holds the path's functions compiled, where
   * a fresh instance per call would otherwise compile them in every call.
   */
  static #warmCallPath() {
    if (Plugin.#warmed) {
      return;
    }
    Plugin.#warmed = true;
    const warm = new Plugin();
    warm.tool({ name: 'echo', input: { text: { type: 'string' }, loud: { type: 'boolean', default: false } } }, ({ text }) => text);
    warm.#callTool('echo', '{"text":"warm"}');
  }

  static #warmed = false;

  /**
   * Runs a tool: synchronously when its check and handler are, so a call makes no promise and
   * runs no job queue unless the tool is async (with a fresh instance per call, all of this is
   * first-time work in every call).
   *
   * @param {string} name
   * @param {string} argsJson
   * @returns {WitCallResult | Promise<WitCallResult>}
   */
  #callTool(name, argsJson) {
    const tool = this.#tools.get(name);
    if (tool === undefined) {
      throw new NotFound(`this plugin has no tool named \`${name}\``);
    }
    /** @type {unknown} */
    let args;
    try {
      args = argsJson.trim() === '' ? {} : JSON.parse(argsJson);
    } catch (error) {
      return failed(`invalid arguments: not valid JSON: ${messageOf(error)}`);
    }
    if (!isObject(args)) {
      return failed(`invalid arguments: expected a JSON object, not ${kind(args)}`);
    }
    const checked = tool.check(args);
    return checked instanceof Promise ? checked.then((c) => runChecked(tool, c)) : runChecked(tool, checked);
  }

  /** @returns {Promise<ListedResource[]>} */
  async #listResources() {
    const listed = [...this.#resources.values()].map((resource) => resource.info);
    const seen = new Set(listed.map((info) => info.uri));
    for (const list of this.#listers) {
      const infos = await list();
      if (!Array.isArray(infos)) {
        throw new TypeError(`a resource lister returned ${kind(infos)}, not a list`);
      }
      for (const spec of infos) {
        const info = resourceInfo(spec, `listed resource \`${spec?.uri}\``);
        if (!seen.has(info.uri)) {
          seen.add(info.uri);
          listed.push(info);
        }
      }
    }
    return listed;
  }

  /**
   * @param {string} uri
   * @returns {Promise<ResourceContents[]>}
   */
  async #readResource(uri) {
    const resource = this.#resources.get(uri);
    if (resource !== undefined) {
      return toContents(await resource.read(uri), uri, resource.info.mimeType);
    }
    for (const template of this.#templates.values()) {
      const vars = template.parsed.match(uri);
      if (vars !== undefined) {
        return toContents(await template.read(vars, uri), uri, template.mimeType);
      }
    }
    throw new NotFound(`this plugin has no resource \`${uri}\``);
  }

  /**
   * @param {string} name
   * @param {[string, string][]} pairs
   * @returns {Promise<WitPromptResult>}
   */
  async #getPrompt(name, pairs) {
    const prompt = this.#prompts.get(name);
    if (prompt === undefined) {
      throw new NotFound(`this plugin has no prompt named \`${name}\``);
    }
    const args = Object.fromEntries(pairs);
    const missing = prompt.listed.arguments.filter((argument) => argument.required && args[argument.name] === undefined);
    if (missing.length > 0) {
      throw new InvalidParams(`the prompt \`${name}\` needs the argument(s) ${missing.map((argument) => `\`${argument.name}\``).join(', ')}`);
    }
    return toPromptResult(await prompt.get(args)).toWit();
  }

  /** @returns {CompletionRef[]} */
  #completable() {
    /** @type {CompletionRef[]} */
    const refs = [];
    for (const [name, prompt] of this.#prompts) {
      if (Object.keys(prompt.completers).length > 0) refs.push({ tag: 'prompt', val: name });
    }
    for (const [uriTemplate, template] of this.#templates) {
      if (Object.keys(template.completers).length > 0) refs.push({ tag: 'resource-template', val: uriTemplate });
    }
    return refs;
  }

  /**
   * @param {CompletionRef} target
   * @param {string} argument
   * @param {string} typed
   * @param {[string, string][]} pairs
   * @returns {Promise<CompletionResult>}
   */
  async #complete(target, argument, typed, pairs) {
    const context = Object.fromEntries(pairs);
    if (target.tag === 'prompt') {
      const prompt = this.#prompts.get(target.val);
      if (prompt === undefined) {
        throw new NotFound(`this plugin has no prompt named \`${target.val}\``);
      }
      if (!prompt.listed.arguments.some((a) => a.name === argument)) {
        throw new InvalidParams(`the prompt \`${target.val}\` has no argument \`${argument}\``);
      }
      return runCompleter(prompt.completers[argument], typed, context, `prompt \`${target.val}\``);
    }
    const template = this.#templates.get(target.val);
    if (template === undefined) {
      throw new NotFound(`this plugin has no resource template \`${target.val}\``);
    }
    if (!template.parsed.variables.includes(argument)) {
      throw new InvalidParams(`the resource template \`${target.val}\` has no variable \`${argument}\``);
    }
    return runCompleter(template.completers[argument], typed, context, `resource template \`${target.val}\``);
  }
}

/**
 * The rest of a tool call once its arguments are checked: the handler's value as the WIT result,
 * or a failed result for wrong arguments or a `ToolError`.
 *
 * @param {{ run: (args: any) => unknown }} tool
 * @param {CheckedArgs} checked
 * @returns {WitCallResult | Promise<WitCallResult>}
 */
function runChecked(tool, checked) {
  if ('wrong' in checked) {
    return failed(`invalid arguments: ${checked.wrong}`);
  }
  const asResult = (/** @type {unknown} */ value) => toToolResult(value).toWit();
  const caught = (/** @type {unknown} */ error) => {
    if (error instanceof ToolError) {
      return failed(error.message);
    }
    throw error;
  };
  let value;
  try {
    value = tool.run(checked.value);
  } catch (error) {
    return caught(error);
  }
  return value instanceof Promise ? value.then(asResult, caught) : asResult(value);
}

/**
 * A tool result for a failure the model should read.
 *
 * @param {string} message
 * @returns {WitCallResult}
 */
function failed(message) {
  return new ToolResult({ content: [text(message)], isError: true }).toWit();
}

/**
 * Runs an export that returns a WIT `result`: anything thrown becomes a `plugin-error` record,
 * which componentize-js sends as the `err` case (an `Error` object would abort the instance).
 *
 * @template T
 * @param {string} where
 * @param {() => T | Promise<T>} run
 * @returns {T | Promise<T>}
 */
function guarded(where, run) {
  let result;
  try {
    result = run();
  } catch (error) {
    throw toPluginError(error, where);
  }
  if (result instanceof Promise) {
    return result.catch((error) => {
      throw toPluginError(error, where);
    });
  }
  return result;
}

/**
 * Runs an export that returns a plain list: it cannot report an error, so a failure is written
 * to the host's log and aborts the call, like a panic in Rust (the host then refuses the plugin,
 * saying why).
 *
 * @template T
 * @param {string} what
 * @param {() => T | Promise<T>} run
 * @returns {Promise<T>}
 */
async function listing(what, run) {
  try {
    return await run();
  } catch (error) {
    reportUnexpected(error, what);
    throw error instanceof Error ? error : new Error(describe(error));
  }
}

/**
 * @param {unknown} spec
 * @param {string[]} keys
 * @param {string} where
 */
function checkSpec(spec, keys, where) {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new DefinitionError(`${where}: expected an object describing it, not ${kind(spec)}`);
  }
  for (const key of Object.keys(spec)) {
    if (!keys.includes(key)) {
      throw new DefinitionError(`${where}: unknown key \`${key}\` (expected one of ${keys.join(', ')})`);
    }
  }
}

/**
 * @param {unknown} handler
 * @param {string} where
 */
function checkHandler(handler, where) {
  if (typeof handler !== 'function') {
    throw new DefinitionError(`${where}: the second argument must be the function that serves it, not ${kind(handler)}`);
  }
}

/**
 * @param {unknown} value
 * @param {string} key
 * @param {string} where
 */
function requireString(value, key, where) {
  if (typeof value !== 'string' || value === '') {
    throw new DefinitionError(`${where}: \`${key}\` must be a non-empty string, not ${kind(value)}`);
  }
}

/**
 * @param {unknown} value
 * @param {string} key
 * @param {string} where
 * @returns {string | undefined}
 */
function optionalString(value, key, where) {
  if (value !== undefined && typeof value !== 'string') {
    throw new DefinitionError(`${where}: \`${key}\` must be a string, not ${kind(value)}`);
  }
  return value;
}

/**
 * @param {unknown} value
 * @param {string} key
 * @param {string} where
 * @returns {boolean | undefined}
 */
function hint(value, key, where) {
  if (value !== undefined && typeof value !== 'boolean') {
    throw new DefinitionError(`${where}: \`${key}\` must be true or false`);
  }
  return value;
}

/**
 * Runs `build`, turning a {@link SchemaError} into a {@link DefinitionError} that names the tool.
 *
 * @template T
 * @param {string} where
 * @param {string} role
 * @param {() => T} build
 * @returns {T}
 */
function schemaOf(where, role, build) {
  try {
    return build();
  } catch (error) {
    if (error instanceof SchemaError) {
      throw new DefinitionError(`${where}: ${role}${error.message.startsWith('`') ? ' ' : ': '}${error.message}`);
    }
    throw error;
  }
}

/**
 * @param {ResourceSpec} spec
 * @param {string} where
 * @returns {ListedResource}
 */
function resourceInfo(spec, where) {
  checkSpec(spec, RESOURCE_KEYS, where);
  requireString(spec.uri, 'uri', where);
  requireString(spec.name, 'name', where);
  let bytes;
  try {
    bytes = size(spec.size);
  } catch (error) {
    throw new DefinitionError(`${where}: ${messageOf(error)}`);
  }
  return {
    uri: spec.uri,
    name: spec.name,
    title: optionalString(spec.title, 'title', where),
    description: optionalString(spec.description, 'description', where),
    mimeType: optionalString(spec.mimeType, 'mimeType', where),
    size: bytes,
    annotations: annotations(spec.annotations),
    icons: icons(spec.icons),
    meta: json(spec.meta),
    file: optionalString(spec.file, 'file', where),
  };
}

/**
 * @param {unknown} specs
 * @param {string[]} names
 * @param {string} where
 * @param {string} what
 * @param {string} which
 * @returns {Completers}
 */
function completersOf(specs, names, where, what, which) {
  if (specs === undefined) return {};
  if (!isObject(specs)) {
    throw new DefinitionError(`${where}: \`complete\` must be an object, ${what} name to values or function`);
  }
  /** @type {Completers} */
  const completers = {};
  for (const [name, spec] of Object.entries(specs)) {
    if (!names.includes(name)) {
      throw new DefinitionError(`${where} completes \`${name}\`, which is not ${which}`);
    }
    try {
      completers[name] = toCompleter(/** @type {import('./types.js').Completion} checked by toCompleter */ (spec), `${where}: ${what} \`${name}\``);
    } catch (error) {
      throw new DefinitionError(messageOf(error));
    }
  }
  return completers;
}

