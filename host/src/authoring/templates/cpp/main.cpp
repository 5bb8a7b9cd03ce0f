// {{name}}: a Palisade plugin.
#include <palisade.h>

#include <string>

namespace {

void greet(const palisade_json *arguments, palisade_result *result, void *) {
    std::string name = palisade_json_string(palisade_json_get(arguments, "name"), "world", nullptr);
    palisade_text(result, ("Hello, " + name + "!").c_str());
}

}  // namespace

extern "C" void palisade_plugin_init() {
    palisade_tool_def tool{};
    tool.name = "greet";
    tool.description = "Say hello to someone";
    tool.input_schema = R"({"type":"object","properties":{"name":{"type":"string","description":"Who to greet."}},"required":["name"]})";
    tool.read_only = true;
    tool.run = greet;
    palisade_tool(&tool);
}
