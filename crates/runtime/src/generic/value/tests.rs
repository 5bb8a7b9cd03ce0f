//! The JSON forms of every WIT type, both ways, against the schemas made from the same types.

use serde_json::json;

use super::*;
use crate::generic::schema;
use crate::generic::types::Signature;

fn record() -> WitType {
    WitType::Record(vec![
        ("x".into(), WitType::S32),
        ("label".into(), WitType::Option(Box::new(WitType::String))),
    ])
}

fn variant() -> WitType {
    WitType::Variant(vec![
        ("circle".into(), Some(WitType::F64)),
        ("dot".into(), None),
    ])
}

/// Every type with values that fit it and values that do not.
fn samples() -> Vec<(WitType, Vec<Json>, Vec<Json>)> {
    vec![
        (
            WitType::Bool,
            vec![json!(true)],
            vec![json!(1), json!("true")],
        ),
        (
            WitType::U8,
            vec![json!(0), json!(255)],
            vec![json!(256), json!(-1), json!(1.5)],
        ),
        (
            WitType::S8,
            vec![json!(-128), json!(127)],
            vec![json!(128), json!(-129)],
        ),
        (WitType::U16, vec![json!(65535)], vec![json!(65536)]),
        (WitType::S16, vec![json!(-32768)], vec![json!(32768)]),
        (
            WitType::U32,
            vec![json!(4294967295u64)],
            vec![json!(4294967296u64)],
        ),
        (
            WitType::S32,
            vec![json!(-2147483648i64)],
            vec![json!(2147483648u64)],
        ),
        (
            WitType::U64,
            vec![json!(u64::MAX)],
            vec![json!(-1), json!(1e20)],
        ),
        (
            WitType::S64,
            vec![json!(i64::MIN), json!(i64::MAX)],
            vec![json!(u64::MAX)],
        ),
        (
            WitType::F64,
            vec![json!(1.5), json!(-3)],
            vec![json!("1.5"), json!(null)],
        ),
        (
            WitType::Char,
            vec![json!("é"), json!("😀")],
            vec![json!(""), json!("ab"), json!(1)],
        ),
        (
            WitType::String,
            vec![json!(""), json!("hi")],
            vec![json!(1), json!(null)],
        ),
        (
            WitType::List(Box::new(WitType::U32)),
            vec![json!([]), json!([1, 2])],
            vec![json!([1, -2]), json!({})],
        ),
        (
            WitType::List(Box::new(WitType::U8)),
            vec![json!("AQID"), json!("")],
            vec![json!([1, 2])],
        ),
        (
            record(),
            vec![
                json!({"x": 1}),
                json!({"x": 1, "label": null}),
                json!({"x": 1, "label": "a"}),
            ],
            vec![
                json!({}),
                json!({"x": 1, "y": 2}),
                json!({"x": "1"}),
                json!([1]),
            ],
        ),
        (
            WitType::Tuple(vec![WitType::String, WitType::U8]),
            vec![json!(["a", 1])],
            vec![json!(["a"]), json!(["a", 1, 2]), json!([1, "a"])],
        ),
        (
            WitType::Option(Box::new(WitType::U8)),
            vec![json!(null), json!(3)],
            vec![json!(300), json!("3")],
        ),
        (
            WitType::Enum(vec!["red".into(), "green".into()]),
            vec![json!("red")],
            vec![json!("blue"), json!(0)],
        ),
        (
            variant(),
            vec![json!({"circle": 2.5}), json!("dot")],
            vec![
                json!("circle"),
                json!({"dot": 1}),
                json!({"circle": 1, "dot": 1}),
                json!("square"),
                json!({"circle": "big"}),
            ],
        ),
        (
            WitType::Result {
                ok: Some(Box::new(WitType::U8)),
                err: None,
            },
            vec![json!({"ok": 1}), json!("err")],
            vec![json!("ok"), json!({"err": 1}), json!({"ok": 1, "err": 2})],
        ),
        (
            WitType::Flags(vec!["read".into(), "write".into()]),
            vec![json!([]), json!(["read", "write"])],
            vec![json!(["read", "read"]), json!(["exec"]), json!("read")],
        ),
    ]
}

fn validator(ty: &WitType) -> jsonschema::Validator {
    let signature = Signature {
        params: vec![("v".into(), ty.clone())],
        result: None,
    };
    let schema = schema::input(&signature, &schema::ParamDocs::default());
    assert!(jsonschema::meta::is_valid(&schema), "{schema}");
    jsonschema::validator_for(&schema).unwrap()
}

#[test]
fn the_schema_and_the_conversion_agree_on_every_type() {
    for (ty, good, bad) in samples() {
        let validator = validator(&ty);
        for json in good {
            let args = json!({"v": json});
            assert!(validator.is_valid(&args), "{} should take {json}", ty.wit());
            let value = from_json(&ty, &json, "v")
                .unwrap_or_else(|e| panic!("{} should take {json}: {e}", ty.wit()));
            // Back to JSON: the same value (an option field left out comes back as null),
            // and it matches the output schema.
            let back = to_json(&ty, &value);
            // In a tuple, so that a record or a result is checked as a value, not as the
            // whole answer.
            let output = schema::output(&Signature {
                params: Vec::new(),
                result: Some(WitType::Tuple(vec![ty.clone()])),
            })
            .unwrap();
            let shown = json!({"result": [back]});
            assert!(
                jsonschema::validator_for(&output).unwrap().is_valid(&shown),
                "{} output {shown} against {output}",
                ty.wit()
            );
            if let (WitType::Record(_), Json::Object(given)) = (&ty, &json) {
                for (k, v) in given {
                    assert_eq!(&back[k], v);
                }
            } else if ty == WitType::F64 {
                assert_eq!(back.as_f64(), json.as_f64());
            } else {
                assert_eq!(back, json, "{}", ty.wit());
            }
        }
        for json in bad {
            let args = json!({"v": json});
            assert!(
                !validator.is_valid(&args),
                "{} should refuse {json}",
                ty.wit()
            );
            assert!(
                from_json(&ty, &json, "v").is_err(),
                "{} conversion should refuse {json}",
                ty.wit()
            );
        }
    }
}

#[test]
fn what_a_schema_cannot_say_the_conversion_refuses() {
    // Not base64, and past f32's range: the schema lets them through, the conversion not.
    let bytes = WitType::List(Box::new(WitType::U8));
    assert!(validator(&bytes).is_valid(&json!({"v": "!!"})));
    assert_eq!(
        from_json(&bytes, &json!("!!"), "v")
            .unwrap_err()
            .to_string(),
        "argument `v`: expected base64 (list<u8>): Invalid symbol 33, offset 0."
    );
    assert!(validator(&WitType::F32).is_valid(&json!({"v": 1e39})));
    assert_eq!(
        from_json(&WitType::F32, &json!(1e39), "v")
            .unwrap_err()
            .to_string(),
        "argument `v`: expected a number within f32's range (f32), got 1e+39"
    );
}

#[test]
fn errors_name_the_path_and_the_expected_type() {
    let params = vec![
        ("p".into(), record()),
        ("shapes".into(), WitType::List(Box::new(variant()))),
        ("perms".into(), WitType::Flags(vec!["read".into()])),
        ("n".into(), WitType::U8),
    ];
    let error = |args: Json| arguments(&params, &args).unwrap_err().to_string();
    let ok = json!({"p": {"x": 1}, "shapes": ["dot"], "perms": [], "n": 1});
    assert_eq!(arguments(&params, &ok).unwrap().len(), 4);
    assert_eq!(
        error(json!([])),
        "argument ``: the arguments must be an object, got an array"
    );
    assert_eq!(
        error(json!({"p": {"x": 1}, "shapes": [], "perms": [], "n": 1, "q": 0})),
        "argument `q`: no such parameter"
    );
    assert_eq!(
        error(json!({"p": {"x": 1}, "shapes": [], "perms": []})),
        "argument `n`: missing; expected an integer from 0 to 255 (u8)"
    );
    assert_eq!(
        error(json!({"p": {"x": "1"}, "shapes": [], "perms": [], "n": 1})),
        "argument `p.x`: expected an integer from -2147483648 to 2147483647 (s32), got a string"
    );
    assert_eq!(
        error(json!({"p": {"x": 1, "z": 2}, "shapes": [], "perms": [], "n": 1})),
        "argument `p`: the record has no field `z`"
    );
    assert_eq!(
        error(json!({"p": {"x": 1}, "shapes": ["dot", {"circle": "big"}], "perms": [], "n": 1})),
        "argument `shapes[1].circle`: expected a number (f64), got a string"
    );
    assert_eq!(
        error(json!({"p": {"x": 1}, "shapes": ["square"], "perms": [], "n": 1})),
        "argument `shapes[0]`: no case `square`; expected one of {\"circle\": ...}, \"dot\""
    );
    assert_eq!(
        error(json!({"p": {"x": 1}, "shapes": ["circle"], "perms": [], "n": 1})),
        "argument `shapes[0]`: case `circle` needs a payload: give {\"circle\": a number (f64)}"
    );
    assert_eq!(
        error(json!({"p": {"x": 1}, "shapes": [{"dot": 1}], "perms": [], "n": 1})),
        "argument `shapes[0]`: case `dot` takes no payload: give \"dot\""
    );
    assert_eq!(
        error(json!({"p": {"x": 1}, "shapes": [], "perms": ["read", "read"], "n": 1})),
        "argument `perms`: flag `read` given twice"
    );
    assert_eq!(
        error(json!({"p": {"x": 1}, "shapes": [], "perms": ["exec"], "n": 1})),
        "argument `perms[0]`: expected one of \"read\", got a string"
    );
    assert_eq!(
        error(json!({"p": {"x": 1}, "shapes": [], "perms": [], "n": 256})),
        "argument `n`: expected an integer from 0 to 255 (u8), got 256"
    );
}

#[test]
fn results_render_non_finite_floats_as_null() {
    assert_eq!(to_json(&WitType::F64, &Value::F64(f64::NAN)), Json::Null);
    assert_eq!(
        to_json(&WitType::F32, &Value::F32(f32::INFINITY)),
        Json::Null
    );
    assert_eq!(to_json(&WitType::F32, &Value::F32(0.5)), json!(0.5));
}
