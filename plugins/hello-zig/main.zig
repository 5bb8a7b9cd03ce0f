//! The Rust `hello` example's `greet`, in Zig with Palisade's C SDK (sdk-guest/c), whose
//! header the build turns into Zig declarations (`zig translate-c`) imported as "palisade".
//! Below this comment it is also what `palisade new --lang zig` writes (host/src/authoring/new.rs).
const p = @import("palisade");

fn greet(arguments: ?*const p.palisade_json, result: ?*p.palisade_result, data: ?*anyopaque) callconv(.c) void {
    _ = data;
    const name = p.palisade_json_string(p.palisade_json_get(arguments, "name"), "world", null);
    p.palisade_textf(result, "Hello, %s!", name);
}

export fn palisade_plugin_init() void {
    _ = p.palisade_tool(&.{
        .name = "greet",
        .description = "Say hello to someone",
        .input_schema =
        \\{"type":"object","properties":{"name":{"type":"string","description":"Who to greet."}},"required":["name"]}
        ,
        .read_only = true,
        .run = greet,
    });
}
