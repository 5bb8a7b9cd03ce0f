// The Rust `hello` example's `greet`, in C++ with Palisade's C SDK (sdk-guest/c). Below this
// comment it is also what `palisade new --lang cpp` writes (host/src/authoring/new.rs).
#include <palisade.h>

#include <string>

namespace {

void greet(const palisade_json *arguments, palisade_result *result, void *) {
    std::string name = palisade_json_string(palisade_json_get(arguments, "name"), "world", nullptr);
    palisade_text(result, ("Hello, " + name + "!").c_str());
}

}  // namespace

extern "C" void palisade_plugin_init() {
    palisade_tool_def greet_tool{};
    greet_tool.name = "greet";
    greet_tool.description = "Say hello to someone";
    greet_tool.input_schema = R"({"type":"object","properties":{"name":{"type":"string","description":"Who to greet."}},"required":["name"]})";
    greet_tool.read_only = true;
    greet_tool.run = greet;
    palisade_tool(&greet_tool);
}
