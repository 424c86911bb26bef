//! A server's form (issue 28.2): what opening one costs (the schema read into fields, each
//! field's schema compiled for its checks), what a key costs (the key, then a frame of the
//! form with every field checked for its reason), and what a hostile schema of 2,000 fields
//! costs to read (50 are kept).
//!
//!   cargo bench --bench form
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed run

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use serde_json::{Map, Value, json};
use taco::event::{InputKind, InputRequest};
use taco::form::FormSpec;
use taco::tui::theme::Theme;
use taco::tui::views::form::FormState;
use taco::tui::views::gate::Gate;

/// The everything server's form, field for field (13 fields, every kind).
fn everything() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"title": "String", "type": "string", "description": "Your full, legal name"},
            "check": {"title": "Boolean", "type": "boolean", "description": "Agree to the terms and conditions"},
            "firstLine": {"title": "String with default", "type": "string", "default": "It was a dark and stormy night."},
            "email": {"title": "String with email format", "type": "string", "format": "email"},
            "homepage": {"type": "string", "format": "uri", "title": "String with uri format"},
            "birthdate": {"title": "String with date format", "type": "string", "format": "date"},
            "integer": {"title": "Integer", "type": "integer", "minimum": 1, "maximum": 100, "default": 42},
            "number": {"title": "Number in range 1-1000", "type": "number", "minimum": 0, "maximum": 1000, "default": 3.5},
            "untitled": {"type": "string", "enum": ["Monica", "Rachel", "Joey", "Chandler", "Ross", "Phoebe"], "default": "Monica"},
            "untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin", "Drums", "Bass"]}, "default": ["Guitar"]},
            "titled": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"}], "default": "hero-1"},
            "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}]}, "default": ["fish-1"]},
            "legacy": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"], "default": "pet-1"}
        },
        "required": ["name"]
    })
}

fn request(spec: FormSpec) -> InputRequest {
    InputRequest {
        id: "a/form1".into(),
        kind: InputKind::Form,
        frame: "a/elicitation-1".into(),
        tool: "MCP server everything".into(),
        prompt: "MCP server everything asks: Please provide inputs for the following fields:"
            .into(),
        parameter: None,
        description: None,
        value_type: None,
        depth: None,
        form: Some(spec),
    }
}

fn bench(c: &mut Criterion) {
    let schema = everything();
    c.bench_function(
        "form: open the everything form (read + compile 13 checks)",
        |b| {
            b.iter(|| {
                let spec = FormSpec::parse(black_box(&schema), &[]).unwrap();
                black_box(FormState::new(request(spec)).unwrap())
            })
        },
    );
    let mut form = FormState::new(request(FormSpec::parse(&schema, &[]).unwrap())).unwrap();
    // Every reason shows: the costliest frame.
    form.on_key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::NONE));
    form.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    let theme = Theme::default();
    let area = Rect::new(0, 0, 100, 40);
    let mut buf = Buffer::empty(area);
    let mut n = 0u32;
    c.bench_function("form: a key and a 100x40 frame, every field checked", |b| {
        b.iter(|| {
            n += 1;
            let code = if n.is_multiple_of(2) {
                KeyCode::Char('x')
            } else {
                KeyCode::Backspace
            };
            form.on_key(KeyEvent::new(code, KeyModifiers::NONE));
            form.render(area, &mut buf, &theme, Gate::Open);
            black_box(&buf);
        })
    });
    let properties: Map<String, Value> = (0..2_000)
        .map(|i| {
            (
                format!("f{i:04}"),
                json!({"type": "string", "description": "x".repeat(50)}),
            )
        })
        .collect();
    let hostile = json!({"type": "object", "properties": properties});
    c.bench_function("form: read a hostile 2,000-field schema (50 kept)", |b| {
        b.iter(|| black_box(FormSpec::parse(black_box(&hostile), &[]).unwrap()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
