// The types of the SDK's API, as JSDoc: the TypeScript compiler checks the SDK against them in
// strict mode (`./dev lint`), and editors use them for completions in a plugin's code. Nothing
// here runs; index.js re-exports them, so a plugin can write
// `/** @type {import('@palisade/sdk').ToolSpec} */`.

export {};

// ---- JSON ------------------------------------------------------------------------------------

/** @typedef {{ [key: string]: unknown }} JsonObject A JSON object (serialized with `JSON.stringify`). */

/** @typedef {{ [keyword: string]: unknown }} JsonSchema A JSON Schema object. */

// ---- WIT records: what the SDK hands the host ------------------------------------------------

/** @typedef {'user' | 'assistant'} Role */

/** @typedef {'invalid-params' | 'not-found' | 'internal' | 'cancelled'} ErrorCode */

/**
 * The WIT `plugin-error`, which componentize-js sends as the `err` of a `result`.
 * @typedef {{ code: ErrorCode, message: string, data: string | undefined }} PluginErrorRecord
 */

/** @typedef {{ audience: Role[], priority: number | undefined, lastModified: string | undefined }} WitAnnotations */

/** @typedef {{ src: string, mimeType: string | undefined, sizes: string[], theme: 'light' | 'dark' | undefined }} WitIcon */

/** @typedef {{ text: string, annotations: WitAnnotations | undefined, meta: string | undefined }} TextContent */

/** @typedef {{ data: Uint8Array, mimeType: string, annotations: WitAnnotations | undefined, meta: string | undefined }} MediaContent */

/**
 * @typedef {object} ResourceLinkContent
 * @property {string} uri
 * @property {string} name
 * @property {string | undefined} title
 * @property {string | undefined} description
 * @property {string | undefined} mimeType
 * @property {bigint | undefined} size
 * @property {WitAnnotations | undefined} annotations
 * @property {WitIcon[]} icons
 * @property {string | undefined} meta
 */

/**
 * A resource's contents (WIT `resource-contents`), made with `contents(uri, body)`.
 * @typedef {object} ResourceContents
 * @property {string} uri
 * @property {string | undefined} mimeType
 * @property {{ tag: 'text', val: string } | { tag: 'blob', val: Uint8Array }} body
 * @property {string | undefined} meta
 */

/** @typedef {{ resource: ResourceContents, annotations: WitAnnotations | undefined, meta: string | undefined }} EmbeddedResourceContent */

/**
 * A content block (WIT `content-block`), made with `text()`, `image()`, `audio()`,
 * `resourceLink()` or `embeddedResource()`.
 * @typedef {{ tag: 'text', val: TextContent }
 *   | { tag: 'image', val: MediaContent }
 *   | { tag: 'audio', val: MediaContent }
 *   | { tag: 'resource-link', val: ResourceLinkContent }
 *   | { tag: 'embedded-resource', val: EmbeddedResourceContent }} ContentBlock
 */

/** A prompt message (WIT `prompt-message`), made with `user()` or `assistant()`. @typedef {{ role: Role, content: ContentBlock }} PromptMessage */

/** @typedef {{ content: ContentBlock[], structuredContent: string | undefined, isError: boolean, meta: string | undefined }} WitCallResult */

/** @typedef {{ description: string | undefined, messages: PromptMessage[], meta: string | undefined }} WitPromptResult */

/**
 * @typedef {object} ListedTool
 * @property {string} name
 * @property {string | undefined} title
 * @property {string | undefined} description
 * @property {string} inputSchema
 * @property {string | undefined} outputSchema
 * @property {{ title: undefined, readOnlyHint: boolean | undefined, destructiveHint: boolean | undefined, idempotentHint: boolean | undefined, openWorldHint: boolean | undefined } | undefined} annotations
 * @property {TaskSupport} taskSupport
 * @property {WitIcon[]} icons
 * @property {string | undefined} meta
 */

/**
 * @typedef {object} ListedResource
 * @property {string} uri
 * @property {string} name
 * @property {string | undefined} title
 * @property {string | undefined} description
 * @property {string | undefined} mimeType
 * @property {bigint | undefined} size
 * @property {WitAnnotations | undefined} annotations
 * @property {WitIcon[]} icons
 * @property {string | undefined} meta
 * @property {string | undefined} file
 */

/**
 * @typedef {object} ListedTemplate
 * @property {string} uriTemplate
 * @property {string} name
 * @property {string | undefined} title
 * @property {string | undefined} description
 * @property {string | undefined} mimeType
 * @property {WitAnnotations | undefined} annotations
 * @property {WitIcon[]} icons
 * @property {string | undefined} meta
 */

/** @typedef {{ name: string, title: string | undefined, description: string | undefined, required: boolean }} ListedPromptArgument */

/**
 * @typedef {object} ListedPrompt
 * @property {string} name
 * @property {string | undefined} title
 * @property {string | undefined} description
 * @property {ListedPromptArgument[]} arguments
 * @property {WitIcon[]} icons
 * @property {string | undefined} meta
 */

/** @typedef {{ tag: 'prompt', val: string } | { tag: 'resource-template', val: string }} CompletionRef */

/** @typedef {{ values: string[], total: number, hasMore: boolean }} CompletionResult */

/**
 * The WIT interfaces a plugin exports, from `plugin.exports()`. Functions returning a WIT
 * `result` throw or reject with a {@link PluginErrorRecord}. `callTool` answers at once (no
 * promise) when the tool's handler does: with a fresh instance per call, a promise costs the
 * call a turn of the job queue.
 * @typedef {object} PluginExports
 * @property {{ listTools(): Promise<ListedTool[]>, callTool(name: string, args: string): WitCallResult | Promise<WitCallResult> }} tools
 * @property {{ listResources(): Promise<ListedResource[]>, listResourceTemplates(): Promise<ListedTemplate[]>, readResource(uri: string): ResourceContents[] | Promise<ResourceContents[]> }} resources
 * @property {{ listPrompts(): Promise<ListedPrompt[]>, getPrompt(name: string, args: [string, string][]): WitPromptResult | Promise<WitPromptResult> }} prompts
 * @property {{ completable(): Promise<CompletionRef[]>, complete(target: CompletionRef, argument: string, typed: string, context: [string, string][]): CompletionResult | Promise<CompletionResult> }} completion
 */

// ---- The WIT host interface (`#wit/host`) ----------------------------------------------------

/** @typedef {'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency'} LogLevel */

/** @typedef {'tools' | 'resources' | 'prompts'} ListKind */

/**
 * A directory of the client's that this plugin may use; `guestPath` is where the plugin sees it.
 * @typedef {{ uri: string, name: string | undefined, guestPath: string, writable: boolean }} Root
 */

/** A root the client named, in answer to `ask.roots()`: only its name, not access to it. @typedef {{ uri: string, name: string | undefined }} ClientRoot */

/**
 * @typedef {{ tag: 'form', val: { message: string, requestedSchema: string } }
 *   | { tag: 'url', val: { message: string, url: string, elicitationId: string } }} ElicitationRequest
 */

/**
 * @typedef {object} SamplingRequest
 * @property {{ role: Role, content: ContentBlock[] }[]} messages
 * @property {string | undefined} systemPrompt
 * @property {number} maxTokens
 * @property {number | undefined} temperature
 * @property {string[]} stopSequences
 * @property {string | undefined} modelPreferences
 * @property {string | undefined} extra
 */

/**
 * One thing to ask the client, made with `ask.form()`, `ask.url()`, `ask.sample()` or `ask.roots()`.
 * @typedef {{ tag: 'elicit', val: ElicitationRequest } | { tag: 'sample', val: SamplingRequest } | { tag: 'list-roots' }} InputRequest
 */

/** @typedef {{ action: 'accept' | 'decline' | 'cancel', content: string | undefined }} ElicitationResponse */

/** @typedef {{ role: Role, content: ContentBlock[], model: string, stopReason: string | undefined, raw: string }} SamplingResponse */

/**
 * @typedef {{ tag: 'elicit', val: ElicitationResponse }
 *   | { tag: 'sample', val: SamplingResponse }
 *   | { tag: 'list-roots', val: ClientRoot[] }} InputResponse
 */

/**
 * The host's answer to one request of `ask`.
 * @typedef {{ tag: 'ok', val: InputResponse } | { tag: 'err', val: { tag: 'awaiting-answer' } | { tag: 'failed', val: string } }} AskResult
 */

/**
 * The host functions (the WIT `host` interface, camelCased), or fakes of them in tests.
 * @typedef {object} HostBindings
 * @property {(level: LogLevel, message: string) => void} log
 * @property {(progress: number, total: number | undefined, message: string | undefined) => void} reportProgress
 * @property {() => boolean} isCancelled
 * @property {() => Root[]} listRoots
 * @property {(name: string) => string | undefined} getEnv
 * @property {(request: ElicitationRequest) => ElicitationResponse} elicit Throws the message on failure.
 * @property {(request: SamplingRequest) => SamplingResponse} sample Throws the message on failure.
 * @property {(requests: [string, InputRequest][]) => [string, AskResult][]} ask
 * @property {(uri: string) => void} notifyResourceUpdated
 * @property {(kind: ListKind) => void} notifyListChanged
 */

/**
 * The parts of a WASI `descriptor` (`wasi:filesystem/types`) that `fs` uses.
 * @typedef {object} Descriptor
 * @property {(pathFlags: { symlinkFollow?: boolean }, path: string, openFlags: { create?: boolean, directory?: boolean, truncate?: boolean }, flags: { read?: boolean, write?: boolean }) => Descriptor} openAt
 * @property {() => string} getType
 * @property {(length: bigint, offset: bigint) => [Uint8Array, boolean]} read
 * @property {(buffer: Uint8Array, offset: bigint) => bigint} write
 * @property {() => { readDirectoryEntry(): { name: string, type: string } | undefined | null }} readDirectory
 */

/** The preopened directories (`wasi:filesystem/preopens`), or fakes of them in tests. @typedef {{ getDirectories(): [Descriptor, string][] }} FilesystemBindings */

/** `wasi:config/store`: a value or secret by key (`undefined` when there is none), or a fake in tests. @typedef {{ get(key: string): string | undefined }} ConfigBindings */

// ---- Options of the content helpers ----------------------------------------------------------

/** Hints for the client about a block or resource. @typedef {{ audience?: Role[], priority?: number, lastModified?: string }} Annotations */

/** @typedef {{ src: string, mimeType?: string, sizes?: string[], theme?: 'light' | 'dark' }} Icon */

/** @typedef {{ annotations?: Annotations, meta?: JsonObject }} BlockOptions */

/**
 * @typedef {object} ResourceLinkOptions
 * @property {string} [title]
 * @property {string} [description]
 * @property {string} [mimeType]
 * @property {number | bigint} [size] In bytes.
 * @property {Annotations} [annotations]
 * @property {Icon[]} [icons]
 * @property {JsonObject} [meta]
 */

/** @typedef {{ mimeType?: string, meta?: JsonObject }} ContentsOptions */

/** Bytes: a Uint8Array (or a Buffer), an ArrayBuffer, another typed array, or an array of numbers 0-255. @typedef {Uint8Array | ArrayBuffer | ArrayBufferView | readonly number[]} Bytes */

/** Content given as a value: a string (a text block) or a content block. @typedef {string | ContentBlock} ContentLike */

/**
 * The fields of `toolResult({...})`.
 * @typedef {object} ToolResultFields
 * @property {ContentLike | ContentLike[]} [content]
 * @property {unknown} [structuredContent] A JSON value matching the tool's output schema.
 * @property {boolean} [isError]
 * @property {JsonObject} [meta]
 */

/** A message given as a value: a string (from the user) or `user(...)` / `assistant(...)`. @typedef {string | PromptMessage} MessageLike */

/**
 * The fields of `promptResult({...})`.
 * @typedef {{ description?: string, messages?: MessageLike | MessageLike[], meta?: JsonObject }} PromptResultFields
 */

// ---- Schemas ---------------------------------------------------------------------------------

/** @typedef {'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object'} FieldType */

/**
 * A field in the SDK's compact schema form: a type name (`'string'`, or `'string?'` when it may
 * be left out) or an object with a `type` and JSON Schema keywords.
 * @typedef {FieldType | `${FieldType}?` | FieldObject} Field
 */

/**
 * @typedef {object} FieldObject
 * @property {FieldType} [type] Needed unless `enum` or `const` is given.
 * @property {string} [description]
 * @property {string} [title]
 * @property {boolean} [optional] The field may be left out.
 * @property {boolean} [required] `required: false` is `optional: true`.
 * @property {unknown} [default] Filled in when the field is left out (which it then may be).
 * @property {Field} [items] The items of an array.
 * @property {Fields} [properties] The fields of an object.
 * @property {string} [header] Mirror the value into the HTTP header `Mcp-Param-{header}` (string, integer, boolean).
 * @property {readonly unknown[]} [enum]
 * @property {unknown} [const]
 * @property {readonly unknown[]} [examples]
 * @property {string} [format]
 * @property {string} [pattern]
 * @property {number} [minLength]
 * @property {number} [maxLength]
 * @property {number} [minimum]
 * @property {number} [maximum]
 * @property {number} [exclusiveMinimum]
 * @property {number} [exclusiveMaximum]
 * @property {number} [multipleOf]
 * @property {number} [minItems]
 * @property {number} [maxItems]
 * @property {boolean} [uniqueItems]
 * @property {boolean | JsonSchema} [additionalProperties]
 * @property {number} [minProperties]
 * @property {number} [maxProperties]
 */

/** The fields of an object in the compact form, by name. @typedef {{ readonly [name: string]: Field }} Fields */

/**
 * Standard Schema (https://standardschema.dev): a schema of zod (v3.24 and later), Valibot,
 * ArkType... `jsonSchema` is the Standard JSON Schema extension.
 * @template [Input=unknown]
 * @template [Output=Input]
 * @typedef {{ readonly '~standard': StandardSchemaProps<Input, Output> }} StandardSchemaV1
 */

/**
 * @template [Input=unknown]
 * @template [Output=Input]
 * @typedef {object} StandardSchemaProps
 * @property {1} version
 * @property {string} vendor
 * @property {(value: unknown, options?: { readonly libraryOptions?: Record<string, unknown> | undefined }) => StandardResult<Output> | Promise<StandardResult<Output>>} validate
 * @property {{ readonly input: Input, readonly output: Output } | undefined} [types]
 * @property {StandardJsonSchemaConverter} [jsonSchema]
 */

/**
 * @typedef {object} StandardJsonSchemaConverter
 * @property {(options: { readonly target: string, readonly libraryOptions?: Record<string, unknown> | undefined }) => Record<string, unknown>} input
 * @property {(options: { readonly target: string, readonly libraryOptions?: Record<string, unknown> | undefined }) => Record<string, unknown>} output
 */

/**
 * @template Output
 * @typedef {{ readonly value: Output, readonly issues?: undefined } | { readonly issues: readonly StandardIssue[] }} StandardResult
 */

/** @typedef {{ readonly message: string, readonly path?: readonly (PropertyKey | { readonly key: PropertyKey })[] | undefined }} StandardIssue */

/**
 * The value a Standard Schema produces (`unknown` when it declares no types).
 * @template {StandardSchemaV1} S
 * @typedef {NonNullable<S['~standard']['types']> extends { readonly output: infer O } ? O : unknown} StandardOutput
 */

// What a handler gets for a compact schema, worked out from it so that editors know the
// arguments' names and types.

/**
 * @template T
 * @typedef {T extends 'string' ? string
 *   : T extends 'number' | 'integer' ? number
 *   : T extends 'boolean' ? boolean
 *   : T extends 'array' ? unknown[]
 *   : T extends 'object' ? JsonObject
 *   : unknown} TypeValue
 */

/**
 * The value of a field declared as `F`.
 * @template F
 * @typedef {F extends `${infer T}?` ? TypeValue<T>
 *   : F extends string ? TypeValue<F>
 *   : F extends { readonly enum: readonly (infer E)[] } ? E
 *   : F extends { readonly const: infer C } ? C
 *   : F extends { readonly type: 'array', readonly items: infer I } ? FieldValue<I>[]
 *   : F extends { readonly type: 'object', readonly properties: infer P } ? FieldsValue<P>
 *   : F extends { readonly type: infer T } ? TypeValue<T>
 *   : unknown} FieldValue
 */

/**
 * Whether a field declared as `F` may be missing. Where defaults are filled in (`Filled`: the
 * top level of a tool's arguments), a field with a default is always there.
 * @template F
 * @template {boolean} Filled
 * @typedef {F extends `${string}?` ? true
 *   : F extends { readonly default: unknown } ? (Filled extends true ? false : true)
 *   : F extends { readonly optional: true } | { readonly required: false } ? true
 *   : false} MayBeMissing
 */

/**
 * The object of the fields declared by `F`.
 * @template F
 * @template {boolean} [Filled=false]
 * @typedef {Flatten<{ -readonly [K in keyof F as MayBeMissing<F[K], Filled> extends true ? never : K]: FieldValue<F[K]> }
 *   & { -readonly [K in keyof F as MayBeMissing<F[K], Filled> extends true ? K : never]?: FieldValue<F[K]> }>} FieldsValue
 */

/** @template T @typedef {{ [K in keyof T]: T[K] }} Flatten */

// ---- Definitions -----------------------------------------------------------------------------

/** A tool's input or output: the compact form, or a Standard Schema. @typedef {Fields | StandardSchemaV1} SchemaLike */

/**
 * The arguments a tool's handler gets for its `input` `I`: the validated value of a Standard
 * Schema, the fields of the compact form (defaults filled in), or any JSON object.
 * @template I
 * @typedef {I extends StandardSchemaV1 ? StandardOutput<I> : I extends Fields ? FieldsValue<I, true> : JsonObject} ToolArgs
 */

/** @typedef {'forbidden' | 'optional' | 'required'} TaskSupport */

/** @typedef {string | { resourceUri: string, visibility?: ('model' | 'app')[] }} ToolUi */

/**
 * An MCP Apps view, for `plugin.uiView(spec, render)`.
 * @typedef {object} UiViewSpec
 * @property {string} uri `ui://AUTHORITY/PATH`.
 * @property {string} name
 * @property {string} [title]
 * @property {string} [description]
 * @property {{ connectDomains?: string[], resourceDomains?: string[], frameDomains?: string[], baseUriDomains?: string[] }} [csp] Origins the page may reach; none: no network.
 * @property {('camera' | 'microphone' | 'geolocation' | 'clipboardWrite')[]} [permissions]
 * @property {string} [domain]
 * @property {boolean} [prefersBorder]
 * @property {Icon[]} [icons]
 * @property {JsonObject} [meta]
 */

/**
 * A tool, for `plugin.tool(spec, handler)`.
 * @template [I=SchemaLike | undefined]
 * @typedef {object} ToolSpec
 * @property {string} name 1 to 64 of `A-Z a-z 0-9 _ -`.
 * @property {string} [title]
 * @property {string} [description] What it does, for the model.
 * @property {I} [input] The arguments: compact form (`{ name: 'string', count: 'integer?' }`) or a Standard Schema (zod...).
 * @property {JsonSchema} [inputSchema] A full JSON Schema, passed on as it is (beside a Standard Schema `input`: describes it).
 * @property {SchemaLike} [output] The structured content: compact form or a Standard Schema.
 * @property {JsonSchema} [outputSchema] The structured content's full JSON Schema.
 * @property {boolean} [readOnly] Hint: it does not change its environment.
 * @property {boolean} [destructive] Hint: it may destroy data.
 * @property {boolean} [idempotent] Hint: calling it twice has no further effect.
 * @property {boolean} [openWorld] Hint: it talks to the outside world.
 * @property {TaskSupport} [taskSupport] Whether a call may run as a task (default `'forbidden'`).
 * @property {ToolUi} [ui] Its MCP Apps view: the `ui://` URI, or `{ resourceUri, visibility }`.
 * @property {Icon[]} [icons]
 * @property {JsonObject} [meta]
 */

/**
 * What a tool handler may return: a string (text), a content block or a list of them, a plain
 * object (structured content, and its JSON as text), another JSON value (its JSON as text),
 * nothing, or a `ToolResult` from `toolResult({...})`.
 * @typedef {string | number | boolean | bigint | null | undefined | void | ContentBlock | ContentBlock[] | import('./content.js').ToolResult | JsonObject | unknown[]} ToolReturn
 */

/**
 * @template [Args=JsonObject]
 * @typedef {(args: Args) => ToolReturn | Promise<ToolReturn>} ToolHandler
 */

/**
 * A resource, for `plugin.resource(spec, read)` and the lists a resource lister returns.
 * @typedef {object} ResourceSpec
 * @property {string} uri
 * @property {string} name
 * @property {string} [title]
 * @property {string} [description]
 * @property {string} [mimeType]
 * @property {number | bigint} [size] In bytes.
 * @property {Annotations} [annotations]
 * @property {Icon[]} [icons]
 * @property {JsonObject} [meta]
 * @property {string} [file] The file its contents come from (the host watches it).
 */

/**
 * What a resource reader may return: a string (text), bytes, or `contents(uri, body)`, one or a list.
 * @typedef {string | Uint8Array | ArrayBuffer | ResourceContents | ResourceContents[]} ResourceReturn
 */

/** @typedef {(uri: string) => ResourceReturn | Promise<ResourceReturn>} ResourceReader */

/** @typedef {() => ResourceSpec[] | Promise<ResourceSpec[]>} ResourceLister */

/**
 * The names of the variables of the URI template `T` (`{name}` and `{+name}`).
 * @template {string} T
 * @typedef {T extends `${string}{${infer V}}${infer Rest}` ? (V extends `+${infer N}` ? N : V) | VariableNames<Rest> : never} VariableNames
 */

/**
 * The variables of the URI template `T`, by name.
 * @template {string} T
 * @typedef {string extends T ? { [name: string]: string } : { [K in VariableNames<T>]: string }} TemplateVars
 */

/**
 * A resource template, for `plugin.resourceTemplate(spec, read)`.
 * @template {string} [T=string]
 * @typedef {object} TemplateSpec
 * @property {T} uriTemplate Such as `notes://{name}`.
 * @property {string} name
 * @property {string} [title]
 * @property {string} [description]
 * @property {string} [mimeType]
 * @property {Annotations} [annotations]
 * @property {Icon[]} [icons]
 * @property {JsonObject} [meta]
 * @property {{ [K in VariableNames<T>]?: Completion }} [complete] Completions of the variables.
 */

/**
 * @template {string} [T=string]
 * @typedef {(vars: TemplateVars<T>, uri: string) => ResourceReturn | Promise<ResourceReturn>} TemplateReader
 */

/**
 * A prompt argument, in `arguments`: `{ name: 'what it means' }` or `{ name: PromptArgument }`.
 * @typedef {object} PromptArgument
 * @property {string} [description]
 * @property {string} [title]
 * @property {boolean} [optional]
 * @property {boolean} [required] `required: false` is `optional: true`.
 * @property {Completion} [complete]
 */

/** @typedef {{ readonly [name: string]: string | PromptArgument }} PromptArguments */

/**
 * The arguments a prompt's handler gets for its `arguments` `A`: every required one is there.
 * @template A
 * @typedef {Flatten<{ -readonly [K in keyof A as A[K] extends { readonly optional: true } | { readonly required: false } ? never : K]: string }
 *   & { -readonly [K in keyof A as A[K] extends { readonly optional: true } | { readonly required: false } ? K : never]?: string }>} PromptArgs
 */

/**
 * A prompt, for `plugin.prompt(spec, get)`.
 * @template [A=PromptArguments]
 * @typedef {object} PromptSpec
 * @property {string} name
 * @property {string} [title]
 * @property {string} [description]
 * @property {A} [arguments]
 * @property {Icon[]} [icons]
 * @property {JsonObject} [meta]
 * @property {{ [K in keyof A]?: Completion }} [complete] Completions of the arguments.
 */

/**
 * What a prompt handler may return: a string (one user message), a message, a list of them, or
 * a `PromptResult` from `promptResult({...})`.
 * @typedef {MessageLike | MessageLike[] | import('./content.js').PromptResult} PromptReturn
 */

/**
 * @template [Args={ [name: string]: string }]
 * @typedef {(args: Args) => PromptReturn | Promise<PromptReturn>} PromptHandler
 */

/**
 * Completes a value as the user types: gets what was typed and the other arguments (name to
 * value), returns candidates (strings, or values turned into strings).
 * @typedef {(typed: string, context: { [name: string]: string }) => Iterable<unknown> | Promise<Iterable<unknown>>} Completer
 */

/** A fixed list of values (filtered by what was typed) or a {@link Completer}. @typedef {readonly unknown[] | Completer} Completion */
