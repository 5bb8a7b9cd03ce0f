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
}
