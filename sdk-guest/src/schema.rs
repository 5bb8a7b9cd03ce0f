//! JSON Schemas for tool arguments and structured output.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The schema of the arguments a tool deserializes: how `T` reads JSON.
pub(crate) fn input_schema<T: JsonSchema>() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .for_deserialize()
        .into_generator()
        .into_root_schema_for::<T>();
    object_schema::<T>(schema.to_value(), "argument")
}

/// The schema of the structured content a tool returns: how `T` writes JSON.
pub(crate) fn output_schema<T: JsonSchema>() -> Value {
    let schema = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    object_schema::<T>(schema.to_value(), "output")
}

/// MCP wants both schemas to describe JSON objects. Schemas without a top-level `type` (such as
/// an internally tagged enum's `oneOf`) get `"type": "object"`; any other type is a bug in the
/// plugin, reported when the host loads it.
///
/// The root's `title` and `description` are dropped: they are the Rust type's name and doc
/// comment, written for programmers; the tool's own description is what the model reads.
fn object_schema<T: JsonSchema>(mut schema: Value, role: &str) -> Value {
    let Some(map) = schema.as_object_mut() else {
        // `true`/`false` schemas: only possible for hand-written `JsonSchema` impls.
        panic!(
            "{role} type `{}` has a boolean JSON schema; it must describe an object",
            T::schema_name()
        );
    };
    map.remove("title");
    map.remove("description");
    match map.get("type") {
        None => {
            map.insert("type".into(), "object".into());
        }
        Some(Value::String(kind)) if kind == "object" => {}
        Some(other) => panic!(
            "{role} type `{}` must serialize as a JSON object (a struct), but its schema has \"type\": {other}",
            T::schema_name()
        ),
    }
    schema
}

/// A tool parameter to mirror into an HTTP header: see [`crate::Tool::mirror_header`].
#[derive(Clone, Debug)]
pub(crate) struct HeaderMark {
    /// Property names from the arguments object down to the parameter, joined by dots.
    pub path: String,
    /// The header's name part: `Region` for `Mcp-Param-Region`.
    pub header: String,
}

/// The key MCP 2026-07-28 (SEP-2243) reads on a property schema.
const HEADER_KEY: &str = "x-mcp-header";

/// Adds an `x-mcp-header` to the property each mark names, checked against the rules of MCP
/// 2026-07-28: the property is reached from the root through `properties` alone, its type is
/// string, integer or boolean, and the header name is an HTTP token that no other parameter of
/// the tool is mirrored into (case aside). Clients drop a tool that breaks them, so a mark that
/// does is a bug in the plugin, reported with its cause.
///
/// Markings written on fields (`#[schemars(extend("x-mcp-header" = ...))]`) are left as they
/// are, and only count for the uniqueness of names: the host checks them when it loads the
/// plugin, and leaves out (with a warning) a tool whose markings break the rules.
pub(crate) fn mirror_headers(schema: &mut Value, marks: &[HeaderMark]) -> Result<(), String> {
    let mut taken = Vec::new();
    if !marks.is_empty() {
        find_markings(schema, "", &mut taken);
    }
    for mark in marks {
        let (path, header) = (&mark.path, &mark.header);
        if header.is_empty() || !header.bytes().all(is_tchar) {
            return Err(format!(
                "cannot mirror `{path}` into a header: `{}` is not an HTTP field name (use \
                 letters, digits and !#$%&'*+-.^_`|~)",
                header.escape_debug()
            ));
        }
        let lower = header.to_ascii_lowercase();
        if let Some((other, _)) = taken
            .iter()
            .find(|(p, h)| p != path && h.to_ascii_lowercase() == lower)
        {
            return Err(format!(
                "cannot mirror `{path}` into the header `{header}`: `{other}` is mirrored into \
                 it already (header names are compared without case)"
            ));
        }
        let property = property_mut(schema, path)?;
        check_type(property)
            .map_err(|why| format!("cannot mirror `{path}` into a header: {why}"))?;
        property.insert(HEADER_KEY.into(), Value::from(header.as_str()));
        taken.retain(|(p, _)| p != path);
        taken.push((path.clone(), header.clone()));
    }
    Ok(())
}

/// The markings already on properties reached from the root through `properties` alone, each
/// with its dotted path.
fn find_markings(schema: &Value, path: &str, found: &mut Vec<(String, String)>) {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    for (name, property) in properties {
        let path = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}.{name}")
        };
        if let Some(Value::String(header)) = property.get(HEADER_KEY) {
            found.push((path.clone(), header.clone()));
        }
        find_markings(property, &path, found);
    }
}

/// The schema of the property at `path` (dotted), reached through `properties` alone.
fn property_mut<'a>(
    schema: &'a mut Value,
    path: &str,
) -> Result<&'a mut serde_json::Map<String, Value>, String> {
    let mut at = schema;
    for (depth, name) in path.split('.').enumerate() {
        let behind_ref = at.get("$ref").is_some();
        let Some(property) = at.get_mut("properties").and_then(|p| p.get_mut(name)) else {
            let parent = path.split('.').take(depth).collect::<Vec<_>>().join(".");
            let whose = if parent.is_empty() {
                "the input schema".to_string()
            } else {
                format!("`{parent}`")
            };
            let hint = if behind_ref {
                " (its schema is a `$ref`: put `#[schemars(inline)]` on the nested type)"
            } else {
                ""
            };
            return Err(format!(
                "cannot mirror `{path}` into a header: {whose} has no property `{name}`{hint}"
            ));
        };
        at = property;
    }
    match at {
        Value::Object(property) => Ok(property),
        _ => Err(format!(
            "cannot mirror `{path}` into a header: its schema is `{at}`, not an object"
        )),
    }
}

/// Whether a property's type may be mirrored: a string, an integer or a boolean.
fn check_type(property: &serde_json::Map<String, Value>) -> Result<(), String> {
    let kind = property.get("type");
    if let Some(Value::String(k)) = kind
        && ["string", "integer", "boolean"].contains(&k.as_str())
    {
        return Ok(());
    }
    let hint = match kind {
        Some(Value::Array(kinds)) if kinds.contains(&Value::from("null")) => {
            ": an `Option` field allows null; make it required, or give it a default with \
             `#[serde(default)]` and a plain type"
        }
        Some(Value::String(k)) if k == "number" => {
            ": numbers are not mirrored (use an integer or a string)"
        }
        None if property.contains_key("$ref") => {
            ": its schema is a `$ref`; put `#[schemars(inline)]` on its type"
        }
        _ => "",
    };
    let kind = kind.map_or("not given".to_string(), Value::to_string);
    Err(format!(
        "its type is {kind}, not one of string, integer, boolean{hint}"
    ))
}

/// RFC 9110 `tchar`: what an HTTP field name is made of.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// Programmer docs, not for the schema.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// Who to greet.
        name: String,
        times: Option<u32>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(tag = "kind")]
    #[allow(dead_code)]
    enum Tagged {
        A { x: u32 },
        B { y: String },
    }

    #[test]
    fn struct_schema_is_a_2020_12_object() {
        let schema = input_schema::<Args>();
        assert_eq!(schema["type"], "object");
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(schema["required"], serde_json::json!(["name"]));
        assert_eq!(schema["properties"]["name"]["description"], "Who to greet.");
        assert!(schema.get("title").is_none() && schema.get("description").is_none());
    }

    #[test]
    fn enum_schema_gets_object_type() {
        let schema = input_schema::<Tagged>();
        assert_eq!(schema["type"], "object");
        assert!(schema.get("oneOf").is_some());
    }

    #[test]
    #[should_panic(expected = "must serialize as a JSON object")]
    fn scalar_schema_is_refused() {
        input_schema::<String>();
    }

    // ---- x-mcp-header ----

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Routed {
        region: String,
        priority: u32,
        #[serde(default)]
        verbose: bool,
        score: f64,
        note: Option<String>,
        #[schemars(extend("x-mcp-header" = "Tenant"))]
        tenant: String,
        target: Target,
        placement: Placement,
    }

    /// Inlined, so its properties are reached through `properties` alone.
    #[derive(Deserialize, JsonSchema)]
    #[schemars(inline)]
    #[allow(dead_code)]
    struct Target {
        zone: String,
    }

    /// Referenced through `$defs`.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Placement {
        rack: String,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct BadExtend {
        #[schemars(extend("x-mcp-header" = "Score"))]
        score: f64,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct NestedExtend {
        inner: Inner,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        #[schemars(extend("x-mcp-header" = "Deep"))]
        deep: String,
    }

    fn mark(path: &str, header: &str) -> HeaderMark {
        HeaderMark {
            path: path.into(),
            header: header.into(),
        }
    }

    fn mirrored(marks: &[HeaderMark]) -> Result<Value, String> {
        let mut schema = input_schema::<Routed>();
        mirror_headers(&mut schema, marks).map(|()| schema)
    }

    #[test]
    fn marks_string_integer_and_boolean_parameters() {
        let schema = mirrored(&[
            mark("region", "Region"),
            mark("priority", "Priority"),
            mark("verbose", "Verbose"),
        ])
        .expect("valid markings");
        let properties = &schema["properties"];
        assert_eq!(properties["region"]["x-mcp-header"], "Region");
        assert_eq!(properties["region"]["type"], "string");
        assert_eq!(properties["priority"]["x-mcp-header"], "Priority");
        assert_eq!(properties["verbose"]["x-mcp-header"], "Verbose");
        // Marked on the field with `extend`: kept, and checked like the others.
        assert_eq!(properties["tenant"]["x-mcp-header"], "Tenant");
        assert!(properties["score"].get("x-mcp-header").is_none());
    }

    #[test]
    fn marks_a_nested_inlined_parameter_by_dotted_path() {
        let schema = mirrored(&[mark("target.zone", "Zone")]).expect("valid marking");
        assert_eq!(
            schema["properties"]["target"]["properties"]["zone"]["x-mcp-header"],
            "Zone"
        );
    }

    #[test]
    fn a_schema_without_markings_is_left_alone() {
        let mut schema = input_schema::<Args>();
        let before = schema.clone();
        mirror_headers(&mut schema, &[]).expect("nothing to check");
        assert_eq!(schema, before);
    }

    fn refused(marks: &[HeaderMark]) -> String {
        mirrored(marks).expect_err("invalid marking")
    }

    #[test]
    fn refuses_a_missing_property() {
        assert_eq!(
            refused(&[mark("regoin", "Region")]),
            "cannot mirror `regoin` into a header: the input schema has no property `regoin`"
        );
        assert_eq!(
            refused(&[mark("target.floor", "Floor")]),
            "cannot mirror `target.floor` into a header: `target` has no property `floor`"
        );
    }

    #[test]
    fn refuses_a_property_behind_a_ref() {
        let why = refused(&[mark("placement.rack", "Rack")]);
        assert!(why.contains("`placement` has no property `rack`"), "{why}");
        assert!(why.contains("#[schemars(inline)]"), "{why}");
    }

    #[test]
    fn refuses_numbers_options_and_objects() {
        assert_eq!(
            refused(&[mark("score", "Score")]),
            "cannot mirror `score` into a header: its type is \"number\", not one of string, \
             integer, boolean: numbers are not mirrored (use an integer or a string)"
        );
        let why = refused(&[mark("note", "Note")]);
        assert!(
            why.starts_with("cannot mirror `note` into a header"),
            "{why}"
        );
        assert!(why.contains("`Option` field allows null"), "{why}");
        let why = refused(&[mark("target", "Target")]);
        assert!(why.contains("its type is \"object\""), "{why}");
        let why = refused(&[mark("placement", "Placement")]);
        assert!(why.contains("its schema is a `$ref`"), "{why}");
    }

    #[test]
    fn refuses_header_names_that_are_not_tokens() {
        for bad in ["", "My Region", "Region:Primary", "Région", "Region\t1"] {
            let why = refused(&[mark("region", bad)]);
            assert!(why.contains("is not an HTTP field name"), "{bad:?}: {why}");
        }
        mirrored(&[mark("region", "X-Region_1.v2~")]).expect("a token");
    }

    #[test]
    fn refuses_a_header_name_used_twice_regardless_of_case() {
        assert_eq!(
            refused(&[mark("region", "Region"), mark("target.zone", "REGION")]),
            "cannot mirror `target.zone` into the header `REGION`: `region` is mirrored into it \
             already (header names are compared without case)"
        );
        // Against a marking written on a field, too.
        let why = refused(&[mark("region", "tenant")]);
        assert!(
            why.contains("`tenant` is mirrored into it already"),
            "{why}"
        );
        // Marking one parameter again replaces its header.
        let schema = mirrored(&[mark("tenant", "Customer"), mark("region", "Tenant")])
            .expect("tenant moved to Customer");
        assert_eq!(schema["properties"]["tenant"]["x-mcp-header"], "Customer");
        assert_eq!(schema["properties"]["region"]["x-mcp-header"], "Tenant");
    }

    #[test]
    fn leaves_field_markings_to_the_host() {
        // The host leaves out a tool whose field markings break the rules; the SDK lets them
        // through unchanged, so that stays the host's decision.
        for mut schema in [input_schema::<BadExtend>(), input_schema::<NestedExtend>()] {
            let before = schema.clone();
            mirror_headers(&mut schema, &[]).expect("not checked");
            assert_eq!(schema, before);
        }
    }
}
