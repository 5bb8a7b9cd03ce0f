/* Palisade's C SDK: MCP tools in C, C++ or Zig, built into a sandboxed WebAssembly component.
 *
 * A plugin defines `palisade_plugin_init`, registers its tools there with `palisade_tool`, and
 * each tool reads its arguments (JSON, already checked against its input schema by the host)
 * and adds to its result. `sdk-guest/c/build.sh DIR OUT.wasm` builds it: for wasm32-wasi as a
 * reactor with palisade.c, palisade_json.c and bindings/plugin.c, then `palisade componentize`.
 *
 * Memory: every call runs in a fresh instance, so a plugin may leave what it allocated; the SDK
 * frees what it owns anyway. Strings are UTF-8 and NUL-terminated unless a length is given. */
#ifndef PALISADE_H
#define PALISADE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PALISADE_SDK_VERSION "0.2.0"

/* ---- JSON values: a tool's arguments ---------------------------------------------------- */

typedef enum palisade_json_kind {
    PALISADE_JSON_NULL,
    PALISADE_JSON_BOOL,
    PALISADE_JSON_NUMBER,
    PALISADE_JSON_STRING,
    PALISADE_JSON_ARRAY,
    PALISADE_JSON_OBJECT,
} palisade_json_kind;

typedef struct palisade_json palisade_json;

/* Parses `len` bytes of JSON (at most 128 levels deep). NULL on bad input, with the reason in
 * `error` (when not NULL) of `error_len` bytes. Free with palisade_json_free. */
palisade_json *palisade_json_parse(const char *text, size_t len, char *error, size_t error_len);
void palisade_json_free(palisade_json *value);

/* The kind of `value`; PALISADE_JSON_NULL for NULL, so absent and null read alike. */
palisade_json_kind palisade_json_type(const palisade_json *value);
/* The member `key` of an object; NULL when absent or `object` is not an object. */
const palisade_json *palisade_json_get(const palisade_json *object, const char *key);
/* The number of items of an array or members of an object; 0 otherwise. */
size_t palisade_json_len(const palisade_json *value);
/* Item `index` of an array, or the value of member `index` of an object; NULL past the end. */
const palisade_json *palisade_json_at(const palisade_json *value, size_t index);
/* The name of member `index` of an object; NULL otherwise. */
const char *palisade_json_key_at(const palisade_json *object, size_t index);
/* A string's text (NUL-terminated; `len`, when not NULL, gets its length in bytes, which counts
 * any NUL inside it); `fallback` when `value` is not a string. */
const char *palisade_json_string(const palisade_json *value, const char *fallback, size_t *len);
double palisade_json_number(const palisade_json *value, double fallback);
bool palisade_json_bool(const palisade_json *value, bool fallback);

/* ---- Writing JSON and text -------------------------------------------------------------- */

/* A growing buffer; zero-initialise it (`palisade_buf buf = {0};`). On running out of memory it
 * stops growing and sets `failed`. `data` is NUL-terminated once anything was written. */
typedef struct palisade_buf {
    char *data;
    size_t len;
    size_t cap;
    bool failed;
} palisade_buf;

void palisade_buf_append(palisade_buf *buf, const char *bytes, size_t len);
void palisade_buf_puts(palisade_buf *buf, const char *text);
void palisade_buf_printf(palisade_buf *buf, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void palisade_buf_vprintf(palisade_buf *buf, const char *format, va_list args);
/* `text` as a JSON string, quoted and escaped. */
void palisade_buf_json_string(palisade_buf *buf, const char *text, size_t len);
/* A number as JSON (`null` for NaN and infinities, which JSON cannot say). */
void palisade_buf_json_number(palisade_buf *buf, double number);
void palisade_buf_free(palisade_buf *buf);

/* ---- Tools ------------------------------------------------------------------------------- */

typedef struct palisade_result palisade_result;

/* Adds a text block to the result. */
void palisade_text(palisade_result *result, const char *text);
void palisade_textf(palisade_result *result, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Marks the call failed (the model reads why) and adds the message as a text block. */
void palisade_tool_error(palisade_result *result, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Sets the structured result: a JSON object (text) matching the tool's output schema. */
void palisade_structured(palisade_result *result, const char *json);

/* Whether a tool's calls may run as MCP tasks (see docs/tasks.md). */
typedef enum palisade_task_support {
    PALISADE_TASK_FORBIDDEN,
    PALISADE_TASK_OPTIONAL,
    PALISADE_TASK_REQUIRED,
} palisade_task_support;

typedef void (*palisade_tool_fn)(const palisade_json *arguments, palisade_result *result,
                                 void *data);

typedef struct palisade_tool_def {
    /* 1 to 64 characters of A-Z a-z 0-9 _ - */
    const char *name;
    /* What it does, for the model. */
    const char *description;
    /* A JSON Schema object for the arguments, as JSON text; NULL for no arguments. */
    const char *input_schema;
    /* A JSON Schema object for palisade_structured's value, or NULL. */
    const char *output_schema;
    /* A name for people, or NULL. */
    const char *title;
    /* The tool changes nothing (a hint for the client). */
    bool read_only;
    palisade_task_support task_support;
    palisade_tool_fn run;
    /* Passed to `run` as it is. */
    void *data;
} palisade_tool_def;

/* Registers a tool. The definition is copied, the strings it points to are not: they must last
 * as long as the plugin (string literals do). Call it from palisade_plugin_init. Returns
 * false, and the plugin fails to load with the reason, for a bad name, a duplicate or a schema
 * that is not a JSON object. */
bool palisade_tool(const palisade_tool_def *tool);

/* The plugin's own: registers its tools. Called once, before the first tool is listed or run. */
void palisade_plugin_init(void);

/* ---- The host ---------------------------------------------------------------------------- */

typedef enum palisade_log_level {
    PALISADE_LOG_DEBUG,
    PALISADE_LOG_INFO,
    PALISADE_LOG_NOTICE,
    PALISADE_LOG_WARNING,
    PALISADE_LOG_ERROR,
    PALISADE_LOG_CRITICAL,
    PALISADE_LOG_ALERT,
    PALISADE_LOG_EMERGENCY,
} palisade_log_level;

/* To the server's log, and to the client as notifications/message when it asked for them. */
void palisade_log(palisade_log_level level, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Progress on the current call; `total` < 0 when unknown, `message` may be NULL. */
void palisade_progress(double progress, double total, const char *message);
/* True once the client cancelled the current call: stop soon. */
bool palisade_is_cancelled(void);
/* The server's environment variable `name` when this plugin may read it (granted, or allowed
 * when asked), else NULL. Free the result with free(). */
char *palisade_get_env(const char *name);

#ifdef __cplusplus
}
#endif

#endif
