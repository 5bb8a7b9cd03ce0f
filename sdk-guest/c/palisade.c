/* The C SDK's plugin side: the tools a plugin registers, served through the exports the
 * generated bindings (bindings/plugin.h, from sdk-guest/wit/sdk.wit) declare, and the host's
 * functions in C terms. A plugin of this SDK exports only tools: the other interfaces of the
 * world answer with empty lists. */
#include "palisade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bindings/plugin.h"

/* The bindings pull in the object file wit-bindgen writes with the world's types; `palisade
 * componentize` embeds those types itself, so the bindings are generated without it and this
 * stands in for the symbol they link against. */
void __component_type_object_force_link_plugin(void) {}

typedef struct tool_entry {
    palisade_tool_def def;
} tool_entry;


static tool_entry *tools;
static size_t tool_count;
static bool initialised;
/* A registration that failed: the plugin then fails to load, with this reason. */
static char *init_error;

struct palisade_result {
    palisade_plugin_types_content_block_t *blocks;
    size_t len;
    char *structured;
    bool is_error;
};

static char *copy_text(const char *text) {
    if (!text) return NULL;
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    if (copy) memcpy(copy, text, len + 1);
    return copy;
}

static void registration_failed(const char *format, const char *name) {
    if (init_error) return;
    palisade_buf buf = {0};
    palisade_buf_printf(&buf, format, name ? name : "(null)");
    init_error = buf.data;
}

static bool valid_name(const char *name) {
    size_t len = name ? strlen(name) : 0;
    if (len == 0 || len > 64) return false;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

static bool schema_is_object(const char *schema) {
    if (!schema) return true;
    palisade_json *parsed = palisade_json_parse(schema, strlen(schema), NULL, 0);
    bool ok = palisade_json_type(parsed) == PALISADE_JSON_OBJECT;
    palisade_json_free(parsed);
    return ok;
}

bool palisade_tool(const palisade_tool_def *def) {
    if (!def || !valid_name(def->name)) {
        registration_failed("palisade_tool: the tool name \"%s\" is not 1 to 64 characters of "
                            "A-Z a-z 0-9 _ -", def ? def->name : NULL);
        return false;
    }
    if (!def->run) {
        registration_failed("palisade_tool: the tool \"%s\" has no run function", def->name);
        return false;
    }
    for (size_t i = 0; i < tool_count; i++) {
        if (strcmp(tools[i].def.name, def->name) == 0) {
            registration_failed("palisade_tool: the tool \"%s\" is registered twice", def->name);
            return false;
        }
    }
    if (!schema_is_object(def->input_schema) || !schema_is_object(def->output_schema)) {
        registration_failed("palisade_tool: a schema of the tool \"%s\" is not a JSON object",
                            def->name);
        return false;
    }
    tool_entry *grown = realloc(tools, (tool_count + 1) * sizeof *tools);
    if (!grown) {
        registration_failed("palisade_tool: out of memory registering \"%s\"", def->name);
        return false;
    }
    tools = grown;
    tools[tool_count].def = *def;
    tool_count++;
    return true;
}

static void ensure_init(void) {
    if (initialised) return;
    initialised = true;
    palisade_plugin_init();
}

/* ---- results ------------------------------------------------------------------------------ */

static void push_text(palisade_result *result, const char *text, size_t len) {
    palisade_plugin_types_content_block_t *grown =
        realloc(result->blocks, (result->len + 1) * sizeof *grown);
    if (!grown) return;
    result->blocks = grown;
    palisade_plugin_types_content_block_t *block = &grown[result->len];
    memset(block, 0, sizeof *block);
    block->tag = PALISADE_PLUGIN_TYPES_CONTENT_BLOCK_TEXT;
    plugin_string_dup_n(&block->val.text.text, text, len);
    result->len++;
}

void palisade_text(palisade_result *result, const char *text) {
    if (result && text) push_text(result, text, strlen(text));
}

static void push_formatted(palisade_result *result, const char *format, va_list args) {
    palisade_buf buf = {0};
    palisade_buf_vprintf(&buf, format, args);
    if (buf.data) push_text(result, buf.data, buf.len);
    palisade_buf_free(&buf);
}

void palisade_textf(palisade_result *result, const char *format, ...) {
    if (!result || !format) return;
    va_list args;
    va_start(args, format);
    push_formatted(result, format, args);
    va_end(args);
}

void palisade_tool_error(palisade_result *result, const char *format, ...) {
    if (!result) return;
    result->is_error = true;
    if (!format) return;
    va_list args;
    va_start(args, format);
    push_formatted(result, format, args);
    va_end(args);
}

void palisade_structured(palisade_result *result, const char *json) {
    if (!result || !json) return;
    free(result->structured);
    result->structured = copy_text(json);
}

/* ---- the exports -------------------------------------------------------------------------- */

static void set_option(plugin_option_string_t *option, const char *text) {
    option->is_some = text != NULL;
    if (text) plugin_string_dup(&option->val, text);
}

static void set_json_option(exports_palisade_plugin_tools_option_json_t *option, const char *text) {
    option->is_some = text != NULL;
    if (text) plugin_string_dup(&option->val, text);
}

static void set_error(palisade_plugin_types_plugin_error_t *err, uint8_t code, const char *text) {
    memset(err, 0, sizeof *err);
    err->code = code;
    plugin_string_dup(&err->message, text);
}

void exports_palisade_plugin_tools_list_tools(exports_palisade_plugin_tools_list_tool_t *ret) {
    ensure_init();
    ret->ptr = NULL;
    ret->len = 0;
    if (init_error) {
        /* A tool named after the problem cannot load: the host refuses it and shows this. */
        fprintf(stderr, "%s\n", init_error);
        abort();
    }
    if (tool_count == 0) return;
    ret->ptr = calloc(tool_count, sizeof *ret->ptr);
    if (!ret->ptr) abort();
    ret->len = tool_count;
    for (size_t i = 0; i < tool_count; i++) {
        const palisade_tool_def *def = &tools[i].def;
        exports_palisade_plugin_tools_tool_t *tool = &ret->ptr[i];
        plugin_string_dup(&tool->name, def->name);
        set_option(&tool->title, def->title);
        set_option(&tool->description, def->description);
        plugin_string_dup(&tool->input_schema,
                          def->input_schema ? def->input_schema : "{\"type\":\"object\"}");
        set_json_option(&tool->output_schema, def->output_schema);
        if (def->read_only) {
            tool->annotations.is_some = true;
            tool->annotations.val.read_only_hint.is_some = true;
            tool->annotations.val.read_only_hint.val = true;
        }
        tool->task_support = (exports_palisade_plugin_tools_task_support_t)def->task_support;
    }
}

bool exports_palisade_plugin_tools_call_tool(plugin_string_t *name,
                                             exports_palisade_plugin_tools_json_t *arguments,
                                             exports_palisade_plugin_tools_call_result_t *ret,
                                             exports_palisade_plugin_tools_plugin_error_t *err) {
    ensure_init();
    const palisade_tool_def *def = NULL;
    for (size_t i = 0; i < tool_count; i++) {
        const char *candidate = tools[i].def.name;
        if (strlen(candidate) == name->len && memcmp(candidate, name->ptr, name->len) == 0) {
            def = &tools[i].def;
        }
    }
    if (!def) {
        set_error(err, PALISADE_PLUGIN_TYPES_ERROR_CODE_NOT_FOUND, "no such tool");
        plugin_string_free(name);
        plugin_string_free(arguments);
        return false;
    }
    char reason[160];
    palisade_json *parsed =
        palisade_json_parse((const char *)arguments->ptr, arguments->len, reason, sizeof reason);
    plugin_string_free(name);
    plugin_string_free(arguments);
    if (!parsed) {
        set_error(err, PALISADE_PLUGIN_TYPES_ERROR_CODE_INVALID_PARAMS, reason);
        return false;
    }
    palisade_result result;
    memset(&result, 0, sizeof result);
    def->run(parsed, &result, def->data);
    palisade_json_free(parsed);
    memset(ret, 0, sizeof *ret);
    ret->content.ptr = result.blocks;
    ret->content.len = result.len;
    ret->is_error = result.is_error;
    if (result.structured) {
        ret->structured_content.is_some = true;
        plugin_string_set(&ret->structured_content.val, result.structured);
        /* The bindings free it after the call returns: it was malloc'ed as they expect. */
    }
    return true;
}

void exports_palisade_plugin_resources_list_resources(
    exports_palisade_plugin_resources_list_resource_t *ret) {
    ret->ptr = NULL;
    ret->len = 0;
}

void exports_palisade_plugin_resources_list_resource_templates(
    exports_palisade_plugin_resources_list_resource_template_t *ret) {
    ret->ptr = NULL;
    ret->len = 0;
}

bool exports_palisade_plugin_resources_read_resource(
    plugin_string_t *uri, exports_palisade_plugin_resources_list_resource_contents_t *ret,
    exports_palisade_plugin_resources_plugin_error_t *err) {
    (void)ret;
    plugin_string_free(uri);
    set_error(err, PALISADE_PLUGIN_TYPES_ERROR_CODE_NOT_FOUND, "this plugin has no resources");
    return false;
}

void exports_palisade_plugin_prompts_list_prompts(
    exports_palisade_plugin_prompts_list_prompt_t *ret) {
    ret->ptr = NULL;
    ret->len = 0;
}

bool exports_palisade_plugin_prompts_get_prompt(
    plugin_string_t *name, plugin_list_tuple2_string_string_t *arguments,
    exports_palisade_plugin_prompts_prompt_result_t *ret,
    exports_palisade_plugin_prompts_plugin_error_t *err) {
    (void)ret;
    plugin_string_free(name);
    plugin_list_tuple2_string_string_free(arguments);
    set_error(err, PALISADE_PLUGIN_TYPES_ERROR_CODE_NOT_FOUND, "this plugin has no prompts");
    return false;
}

void exports_palisade_plugin_completion_completable(
    exports_palisade_plugin_completion_list_completion_ref_t *ret) {
    ret->ptr = NULL;
    ret->len = 0;
}

bool exports_palisade_plugin_completion_complete(
    exports_palisade_plugin_completion_completion_ref_t *target, plugin_string_t *argument_name,
    plugin_string_t *argument_value, plugin_list_tuple2_string_string_t *context,
    exports_palisade_plugin_completion_completion_result_t *ret,
    exports_palisade_plugin_completion_plugin_error_t *err) {
    (void)ret;
    exports_palisade_plugin_completion_completion_ref_free(target);
    plugin_string_free(argument_name);
    plugin_string_free(argument_value);
    plugin_list_tuple2_string_string_free(context);
    set_error(err, PALISADE_PLUGIN_TYPES_ERROR_CODE_NOT_FOUND, "this plugin completes nothing");
    return false;
}

/* ---- the host ----------------------------------------------------------------------------- */

void palisade_log(palisade_log_level level, const char *format, ...) {
    if (!format) return;
    palisade_buf buf = {0};
    va_list args;
    va_start(args, format);
    palisade_buf_vprintf(&buf, format, args);
    va_end(args);
    if (!buf.data) return;
    plugin_string_t message = {(uint8_t *)buf.data, buf.len};
    palisade_plugin_host_log((palisade_plugin_host_log_level_t)level, &message);
    palisade_buf_free(&buf);
}

void palisade_progress(double progress, double total, const char *message) {
    plugin_string_t text;
    if (message) plugin_string_set(&text, message);
    palisade_plugin_host_report_progress(progress, total < 0 ? NULL : &total,
                                         message ? &text : NULL);
}

bool palisade_is_cancelled(void) { return palisade_plugin_host_is_cancelled(); }

char *palisade_get_env(const char *name) {
    if (!name) return NULL;
    plugin_string_t key;
    plugin_string_set(&key, name);
    plugin_string_t value = {0};
    if (!palisade_plugin_host_get_env(&key, &value)) return NULL;
    char *text = malloc(value.len + 1);
    if (text) {
        memcpy(text, value.ptr, value.len);
        text[value.len] = '\0';
    }
    plugin_string_free(&value);
    return text;
}
