use serde_json::json;

use super::*;
use crate::form::spec::tests::{rich, rich_order};

fn check(name: &str, value: Value) -> Result<(), String> {
    let spec = FormSpec::parse(&rich(), &rich_order()).unwrap();
    let checker = Checker::new(&spec);
    let (i, field) = (spec.fields.iter().enumerate())
        .find(|(_, f)| f.name == name)
        .unwrap();
    checker.check(i, field, &value)
}

#[test]
fn every_limit_says_its_reason() {
    assert_eq!(check("count", json!(500)), Err("must be 1 to 100".into()));
    assert_eq!(check("count", json!(0)), Err("must be 1 to 100".into()));
    assert_eq!(check("count", json!(100)), Ok(()));
    assert_eq!(check("ratio", json!(1.5)), Err("must be 0 to 1".into()));
    assert_eq!(
        check("name", json!("A")),
        Err("at least 2 characters".into())
    );
    assert_eq!(
        check("name", json!("A".repeat(21))),
        Err("at most 20 characters".into())
    );
    assert_eq!(
        check("email", json!("not an email")),
        Err("not a valid email (name@example.com)".into())
    );
    assert_eq!(check("email", json!("ann@example.com")), Ok(()));
    assert_eq!(
        check("site", json!("not a url")),
        Err("not a valid uri (https://example.com/page)".into())
    );
    assert_eq!(check("site", json!("https://example.com")), Ok(()));
    assert_eq!(
        check("born", json!("2024-13-40")),
        Err("not a valid date (YYYY-MM-DD)".into())
    );
    assert_eq!(check("born", json!("2024-02-29")), Ok(()));
    assert!(
        check("at", json!("yesterday"))
            .unwrap_err()
            .contains("date-time")
    );
    assert_eq!(check("at", json!("2024-02-29T10:00:00Z")), Ok(()));
    assert_eq!(
        check("friend", json!("superman")),
        Err("not one of the options".into())
    );
    assert_eq!(check("hero", json!("h2")), Ok(()));
    assert_eq!(check("tools", json!([])), Err("pick at least 1".into()));
    assert_eq!(
        check("tools", json!(["Guitar", "Piano", "Drums"])),
        Err("pick at most 2".into())
    );
    assert_eq!(
        check("tools", json!(["Harp"])),
        Err("not one of the options".into())
    );
}

#[test]
fn the_fields_own_schema_holds_what_the_own_checks_do_not() {
    // A pattern is not one of the usual limits: jsonschema says why.
    let schema = json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}});
    let spec = FormSpec::parse(&schema, &[]).unwrap();
    let checker = Checker::new(&spec);
    let reason = checker
        .check(0, &spec.fields[0], &json!("abc"))
        .unwrap_err();
    assert!(reason.contains("abc"), "{reason}");
    assert_eq!(checker.check(0, &spec.fields[0], &json!("ABC")), Ok(()));
}

#[test]
fn numbers_are_read_as_typed() {
    assert_eq!(parse_number(" 42 ", true), Ok(json!(42)));
    assert_eq!(
        parse_number("4.5", true),
        Err("must be a whole number".into())
    );
    assert_eq!(parse_number("four", true), Err("not a number".into()));
    assert_eq!(parse_number("2.5", false), Ok(json!(2.5)));
    assert_eq!(parse_number("inf", false), Err("not a number".into()));
}

#[test]
fn the_whole_content_is_checked_against_the_schema() {
    let ok = json!({"name": "Ann", "count": 3})
        .as_object()
        .unwrap()
        .clone();
    assert_eq!(check_content(&rich(), &ok), Ok(()));
    let missing = json!({"count": 3}).as_object().unwrap().clone();
    assert!(
        check_content(&rich(), &missing)
            .unwrap_err()
            .contains("name")
    );
    let bad = json!({"name": "Ann", "count": 3, "site": "not a url"})
        .as_object()
        .unwrap()
        .clone();
    assert!(check_content(&rich(), &bad).unwrap_err().contains("/site"));
}
