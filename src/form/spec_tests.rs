use serde_json::json;

use super::*;

/// A form with every kind of field, listed out of alphabetical order.
pub(crate) fn rich() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "description": "Your full name", "minLength": 2, "maxLength": 20},
            "agree": {"type": "boolean", "title": "Agree", "default": false},
            "email": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "uri"},
            "born": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"},
            "count": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
            "ratio": {"type": "number", "minimum": 0, "maximum": 1},
            "friend": {"type": "string", "enum": ["Monica", "Ross"], "default": "Ross"},
            "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Batman"}]},
            "pet": {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]},
            "tools": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]}, "default": ["Piano"]},
            "fish": {"type": "array", "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}]}}
        },
        "required": ["name", "count"]
    })
}

/// The server's order of [`rich`].
pub(crate) fn rich_order() -> Vec<String> {
    [
        "name", "agree", "email", "site", "born", "at", "count", "ratio", "friend", "hero", "pet",
        "tools", "fish",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn fields_keep_the_servers_order_and_every_kind() {
    let spec = FormSpec::parse(&rich(), &rich_order()).unwrap();
    let names: Vec<&str> = spec.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, rich_order());
    let kind = |name: &str| &spec.fields.iter().find(|f| f.name == name).unwrap().kind;
    assert!(matches!(kind("agree"), FieldKind::Toggle));
    assert!(matches!(kind("email"), FieldKind::Text { format: Some(f), .. } if f == "email"));
    assert!(matches!(
        kind("name"),
        FieldKind::Text {
            min_length: Some(2),
            max_length: Some(20),
            ..
        }
    ));
    assert!(matches!(
        kind("count"),
        FieldKind::Number {
            integer: true,
            minimum: Some(1.0),
            maximum: Some(100.0)
        }
    ));
    assert!(matches!(
        kind("ratio"),
        FieldKind::Number { integer: false, .. }
    ));
    let labels = |name: &str| match kind(name) {
        FieldKind::Choice { options } | FieldKind::Multi { options, .. } => {
            options.iter().map(|o| o.label.clone()).collect::<Vec<_>>()
        }
        other => panic!("{name} is {other:?}"),
    };
    assert_eq!(labels("friend"), ["Monica", "Ross"]);
    assert_eq!(labels("hero"), ["Superman", "Batman"], "titled oneOf");
    assert_eq!(labels("pet"), ["Cats", "Dogs"], "legacy enumNames");
    assert_eq!(
        labels("tools"),
        ["Guitar", "Piano", "Drums"],
        "array of enum"
    );
    assert_eq!(labels("fish"), ["Tuna", "Trout"], "array of titled anyOf");
    assert!(matches!(
        kind("tools"),
        FieldKind::Multi {
            min_items: Some(1),
            max_items: Some(2),
            ..
        }
    ));
    let name = &spec.fields[0];
    assert!(name.required && name.title.as_deref() == Some("Name"));
    assert_eq!(spec.fields[6].default, Some(json!(42)));
    assert!(!spec.fields[1].required);
}

#[test]
fn without_an_order_the_maps_order_is_kept() {
    let spec = FormSpec::parse(&rich(), &[]).unwrap();
    assert_eq!(spec.fields.len(), 13);
    // Names the server listed that do not exist are skipped; repeats count once.
    let order = ["count", "nope", "count", "name"].map(String::from);
    let spec = FormSpec::parse(&rich(), &order).unwrap();
    assert_eq!(spec.fields[0].name, "count");
    assert_eq!(spec.fields[1].name, "name");
    assert_eq!(spec.fields.len(), 13);
}

#[test]
fn a_hostile_schema_is_bounded_or_refused() {
    // Thousands of fields: the first MAX_FIELDS show, the rest are counted.
    let properties: Map<String, Value> = (0..2_000)
        .map(|i| (format!("f{i:04}"), json!({"type": "string"})))
        .collect();
    let schema = json!({"type": "object", "properties": properties});
    let spec = FormSpec::parse(&schema, &[]).unwrap();
    assert_eq!(spec.fields.len(), MAX_FIELDS);
    assert_eq!(spec.omitted, 2_000 - MAX_FIELDS);
    assert!(!spec.hides_required(&schema));
    let required = json!({"type": "object", "properties": properties, "required": ["f1999"]});
    assert!(
        FormSpec::parse(&required, &[])
            .unwrap()
            .hides_required(&required)
    );
    // Huge titles are cut, control characters made inert.
    let long = "x".repeat(100_000);
    let schema = json!({"type": "object", "properties": {"a": {"type": "string", "title": format!("\u{1b}[2J{long}"), "description": long}}});
    let spec = FormSpec::parse(&schema, &[]).unwrap();
    let field = &spec.fields[0];
    assert!(field.label().chars().count() <= MAX_LABEL + 1);
    assert!(!field.label().contains('\u{1b}'));
    assert!(field.description.as_ref().unwrap().chars().count() <= MAX_TEXT + 1);
    // Too large a schema, a nested object, a choice of thousands: refused with a reason.
    let big = json!({"type": "object", "properties": {"a": {"type": "string", "description": "y".repeat(MAX_SCHEMA_BYTES)}}});
    assert!(matches!(
        FormSpec::parse(&big, &[]),
        Err(FormError::TooLarge(_))
    ));
    let nested = json!({"type": "object", "properties": {"deep": {"type": "object", "properties": {"a": {"type": "object"}}}}});
    let error = FormSpec::parse(&nested, &[]).unwrap_err();
    assert_eq!(error, FormError::Unsupported("deep".into()));
    assert!(error.to_string().contains("'deep'"));
    let many: Vec<String> = (0..500).map(|i| i.to_string()).collect();
    let choice = json!({"type": "object", "properties": {"c": {"type": "string", "enum": many}}});
    assert_eq!(
        FormSpec::parse(&choice, &[]),
        Err(FormError::Options("c".into(), 500))
    );
    assert_eq!(
        FormSpec::parse(&json!({"type": "string"}), &[]),
        Err(FormError::NotAnObject)
    );
    let free_array = json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "string"}}}});
    assert!(matches!(
        FormSpec::parse(&free_array, &[]),
        Err(FormError::Unsupported(_))
    ));
}

#[test]
fn a_form_reads_back_from_its_event_json() {
    let spec = FormSpec::parse(&rich(), &rich_order()).unwrap();
    let text = serde_json::to_string(&spec).unwrap();
    let back: FormSpec = serde_json::from_str(&text).unwrap();
    assert_eq!(back, spec, "the order survives a session file");
}
