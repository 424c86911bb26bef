//! A small TOML grammar, since syntect bundles none: comments, table headers, keys, strings
//! (triple-quoted ones across lines), dates, booleans and numbers.
//!
//! Built in code rather than loaded from a `.sublime-syntax` file, which would need syntect's
//! YAML loader (and an unmaintained YAML crate). Context references cannot be constructed
//! outside syntect (the enum is `non_exhaustive`), so those few come through serde.

use std::collections::HashMap;

use syntect::parsing::syntax_definition::{
    Context, ContextReference, MatchOperation, MatchPattern, Pattern, SyntaxDefinition,
};
use syntect::parsing::{Scope, SyntaxSet, SyntaxSetBuilder};

/// A key, bare or quoted; dotted keys are several joined by `.`.
const KEY: &str = r#"(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"#;

/// The grammar in a set of its own; `None` if it does not build (then TOML is drawn plain).
pub(super) fn syntax_set() -> Option<SyntaxSet> {
    let mut builder = SyntaxSetBuilder::new();
    builder.add(definition()?);
    Some(builder.build())
}

fn definition() -> Option<SyntaxDefinition> {
    let source = Scope::new("source.toml").ok()?;
    let key = format!(r"(?:^\s*|(?<=[{{,])\s*){KEY}(?:\s*\.\s*{KEY})*(?=\s*=)");
    let main = context(
        vec![source],
        vec![
            matched(r"#.*", "comment.line.number-sign.toml")?,
            matched(r"^\s*\[\[?[^\]\n]*\]\]?", "entity.name.section.toml")?,
            matched(&key, "meta.mapping.key.toml")?,
            pushed(r#"""""#, "string.quoted.triple.toml", "basic_block")?,
            pushed("'''", "string.quoted.single.block.toml", "literal_block")?,
            matched(r#""(?:[^"\\\n]|\\.)*""#, "string.quoted.double.toml")?,
            matched(r"'[^'\n]*'", "string.quoted.single.toml")?,
            matched(
                r"\d{4}-\d{2}-\d{2}(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:\d{2})?)?",
                "constant.other.datetime.toml",
            )?,
            matched(r"\b(?:true|false)\b", "constant.language.toml")?,
            matched(
                r"[+-]?(?:0x[0-9A-Fa-f_]+|0o[0-7_]+|0b[01_]+|inf|nan|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d[\d_]*)?)\b",
                "constant.numeric.toml",
            )?,
        ],
    );
    let basic_block = block(
        "string.quoted.triple.toml",
        vec![
            matched(r"\\.", "constant.character.escape.toml")?,
            popped(r#"""""#)?,
        ],
    )?;
    let literal_block = block("string.quoted.single.block.toml", vec![popped("'''")?])?;
    // What syntect's loader adds to every grammar: the outer contexts parsing starts in.
    let mut start = context(Vec::new(), vec![pattern("", &[], push("__main")?)?]);
    start.meta_include_prototype = false;
    start.meta_content_scope = vec![source];
    let outer_main = context(Vec::new(), vec![Pattern::Include(named("main")?)]);
    let contexts = HashMap::from([
        ("__start".to_string(), start),
        ("__main".to_string(), outer_main),
        ("main".to_string(), main),
        ("basic_block".to_string(), basic_block),
        ("literal_block".to_string(), literal_block),
    ]);
    Some(SyntaxDefinition {
        name: "TOML".into(),
        file_extensions: vec!["toml".into()],
        scope: source,
        first_line_match: None,
        hidden: false,
        variables: HashMap::new(),
        contexts,
    })
}

fn context(content_scope: Vec<Scope>, patterns: Vec<Pattern>) -> Context {
    let mut context = Context::new(true);
    context.meta_content_scope = content_scope;
    context.patterns = patterns;
    context
}

/// A string block: its scope covers the closing quotes too.
fn block(scope: &str, patterns: Vec<Pattern>) -> Option<Context> {
    let mut context = context(Vec::new(), patterns);
    context.meta_scope = vec![Scope::new(scope).ok()?];
    Some(context)
}

fn named(name: &str) -> Option<ContextReference> {
    serde_json::from_value(serde_json::json!({ "Named": name })).ok()
}

fn push(name: &str) -> Option<MatchOperation> {
    Some(MatchOperation::Push(vec![named(name)?]))
}

fn pattern(regex: &str, scopes: &[&str], operation: MatchOperation) -> Option<Pattern> {
    let scope = scopes
        .iter()
        .map(|s| Scope::new(s).ok())
        .collect::<Option<Vec<Scope>>>()?;
    Some(Pattern::Match(MatchPattern::new(
        false,
        regex.to_string(),
        scope,
        None,
        operation,
        None,
    )))
}

fn matched(regex: &str, scope: &str) -> Option<Pattern> {
    pattern(regex, &[scope], MatchOperation::None)
}

/// Opens a block (its opening quotes take the block's scope from the context).
fn pushed(regex: &str, scope: &str, into: &str) -> Option<Pattern> {
    pattern(regex, &[scope], push(into)?)
}

fn popped(regex: &str) -> Option<Pattern> {
    pattern(regex, &[], MatchOperation::Pop)
}
