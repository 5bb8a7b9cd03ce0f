/* The Rust `hello` example's `greet`, in C with Palisade's C SDK (sdk-guest/c). Below this
 * comment it is also what `palisade new --lang c` writes (host/src/authoring/new.rs). */
#include <palisade.h>

static void greet(const palisade_json *arguments, palisade_result *result, void *data) {
    (void)data;
    const char *name = palisade_json_string(palisade_json_get(arguments, "name"), "world", NULL);
    palisade_textf(result, "Hello, %s!", name);
}

void palisade_plugin_init(void) {
    palisade_tool(&(palisade_tool_def){
        .name = "greet",
        .description = "Say hello to someone",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\","
                        "\"description\":\"Who to greet.\"}},\"required\":[\"name\"]}",
        .read_only = true,
        .run = greet,
    });
}
