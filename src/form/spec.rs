//! A form's requested schema read into typed fields, in the server's order and bounded: a
//! hostile schema (thousands of fields, megabyte titles, nested objects) is cut or refused
//! here, before anything is drawn.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Fields shown at most; the rest are counted in [`FormSpec::omitted`] and said so.
pub const MAX_FIELDS: usize = 50;
/// Characters of a title, description or message shown at most.
pub const MAX_TEXT: usize = 500;
/// Characters of a field's name or an option's label shown at most.
pub const MAX_LABEL: usize = 100;
/// Options of one choice shown at most (a longer list is refused: a choice cut short
/// could not be answered faithfully).
pub const MAX_OPTIONS: usize = 100;
/// Bytes of a requested schema read at most.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;

/// Why a requested schema cannot be shown as a form (the form is then declined).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    /// Larger than [`MAX_SCHEMA_BYTES`].
    #[error("the schema is {0} bytes, more than the {MAX_SCHEMA_BYTES} a form may have")]
    TooLarge(usize),
    /// Not an object schema with `properties`.
    #[error("the schema is not an object of fields")]
    NotAnObject,
    /// A field of a kind a form cannot hold (a nested object, an array of free values).
    #[error("field '{0}' is not a text, number, yes/no or choice field")]
    Unsupported(String),
    /// A choice with more options than [`MAX_OPTIONS`] or none.
    #[error("field '{0}' offers {1} options (a form shows 1 to {MAX_OPTIONS})")]
    Options(String, usize),
}

/// A form to fill in: its fields in the server's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FormSpec {
    /// The schema's title, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The fields shown, in schema order.
    pub fields: Vec<Field>,
    /// Fields past [`MAX_FIELDS`], not shown (and never sent).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Field {
    /// The property's name: the key its value is sent under.
    pub name: String,
    /// What the form calls it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be filled in.
    #[serde(default)]
    pub required: bool,
    /// What kind of value it takes.
    pub kind: FieldKind,
    /// The value it starts with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// The property's own schema, which its value is checked against.
    pub schema: Value,
}

impl Field {
    /// Its name as shown: the title, else the property's name (bounded, inert).
    pub fn label(&self) -> String {
        bounded(self.title.as_deref().unwrap_or(&self.name), MAX_LABEL)
    }
}

/// The kinds of field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FieldKind {
    /// A line of text.
    Text {
        /// `email`, `uri`, `date`, `date-time`, when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        format: Option<String>,
        /// Fewest characters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_length: Option<u64>,
        /// Most characters.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_length: Option<u64>,
    },
    /// A number typed as text.
    Number {
        /// Whole numbers only.
        integer: bool,
        /// Smallest allowed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        minimum: Option<f64>,
        /// Largest allowed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        maximum: Option<f64>,
    },
    /// Yes or no.
    Toggle,
    /// One of a list.
    Choice {
        /// The options, in order.
        options: Vec<Choice>,
    },
    /// Any of a list.
    Multi {
        /// The options, in order.
        options: Vec<Choice>,
        /// Fewest picked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_items: Option<u64>,
        /// Most picked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_items: Option<u64>,
    },
}

/// One option of a choice: the value sent and what it is called.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// Sent when picked.
    pub value: Value,
    /// Shown.
    pub label: String,
}

/// `text` cut to `max` characters on one line, inert on a terminal.
fn bounded(text: &str, max: usize) -> String {
    crate::text::safe::terminal(&crate::text::summarize(text, max)).into_owned()
}

fn text_of(schema: &Value, key: &str, max: usize) -> Option<String> {
    let text = schema.get(key)?.as_str()?;
    Some(bounded(text, max)).filter(|t| !t.is_empty())
}

fn number_of(schema: &Value, key: &str) -> Option<f64> {
    schema.get(key)?.as_f64().filter(|n| n.is_finite())
}

fn count_of(schema: &Value, key: &str) -> Option<u64> {
    schema.get(key)?.as_u64()
}

/// A property's type: the first non-null of a list (`["string", "null"]`).
fn type_of(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(kind) => Some(kind),
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null"),
        _ => None,
    }
}

/// The label of an option's value: a string as it is, anything else as JSON.
fn label_of(value: &Value) -> String {
    let text = match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    bounded(&text, MAX_LABEL)
}

/// The options of `schema`: an `enum` (titled by `enumNames` when it has as many), or
/// `oneOf`/`anyOf` of `const` + `title`. `None`: not a choice.
fn options_of(name: &str, schema: &Value) -> Result<Option<Vec<Choice>>, FormError> {
    let options: Vec<Choice> = if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = (schema.get("enumNames").and_then(Value::as_array))
            .filter(|names| names.len() == values.len());
        (values.iter().enumerate())
            .map(|(i, value)| Choice {
                value: value.clone(),
                label: names
                    .and_then(|names| names.get(i))
                    .and_then(Value::as_str)
                    .map_or_else(|| label_of(value), |n| bounded(n, MAX_LABEL)),
            })
            .collect()
    } else if let Some(list) =
        (schema.get("oneOf").or_else(|| schema.get("anyOf"))).and_then(Value::as_array)
    {
        let mut options = Vec::new();
        for option in list {
            let Some(value) = option.get("const") else {
                return Err(FormError::Unsupported(bounded(name, MAX_LABEL)));
            };
            options.push(Choice {
                value: value.clone(),
                label: text_of(option, "title", MAX_LABEL).unwrap_or_else(|| label_of(value)),
            });
        }
        options
    } else {
        return Ok(None);
    };
    if options.is_empty() || options.len() > MAX_OPTIONS {
        return Err(FormError::Options(bounded(name, MAX_LABEL), options.len()));
    }
    Ok(Some(options))
}

/// The kind of the field `name` with schema `schema`.
fn kind_of(name: &str, schema: &Value) -> Result<FieldKind, FormError> {
    let unsupported = || FormError::Unsupported(bounded(name, MAX_LABEL));
    let kind = type_of(schema);
    if kind == Some("array") {
        let items = schema.get("items").ok_or_else(unsupported)?;
        let options = options_of(name, items)?.ok_or_else(unsupported)?;
        return Ok(FieldKind::Multi {
            options,
            min_items: count_of(schema, "minItems"),
            max_items: count_of(schema, "maxItems"),
        });
    }
    if let Some(options) = options_of(name, schema)? {
        return Ok(FieldKind::Choice { options });
    }
    Ok(match kind {
        Some("string") | None if schema.is_object() => FieldKind::Text {
            format: text_of(schema, "format", MAX_LABEL),
            min_length: count_of(schema, "minLength"),
            max_length: count_of(schema, "maxLength"),
        },
        Some(kind @ ("number" | "integer")) => FieldKind::Number {
            integer: kind == "integer",
            minimum: number_of(schema, "minimum"),
            maximum: number_of(schema, "maximum"),
        },
        Some("boolean") => FieldKind::Toggle,
        _ => return Err(unsupported()),
    })
}

impl FormSpec {
    /// Reads `schema` (an object schema of plain fields) into a form; `order` is the order
    /// the server listed the fields in (a `serde_json` map sorts its keys), names missing
    /// from it follow in the map's order.
    pub fn parse(schema: &Value, order: &[String]) -> Result<Self, FormError> {
        let size = serde_json::to_string(schema).map_or(usize::MAX, |s| s.len());
        if size > MAX_SCHEMA_BYTES {
            return Err(FormError::TooLarge(size));
        }
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .ok_or(FormError::NotAnObject)?;
        let required: Vec<&str> = (schema.get("required").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let names = ordered(properties, order);
        let omitted = names.len().saturating_sub(MAX_FIELDS);
        let mut fields = Vec::with_capacity(names.len().min(MAX_FIELDS));
        for name in names.into_iter().take(MAX_FIELDS) {
            let Some(property) = properties.get(name) else {
                continue;
            };
            fields.push(Field {
                name: name.clone(),
                title: text_of(property, "title", MAX_LABEL),
                description: text_of(property, "description", MAX_TEXT),
                required: required.contains(&name.as_str()),
                kind: kind_of(name, property)?,
                default: property.get("default").cloned(),
                schema: property.clone(),
            });
        }
        Ok(Self {
            title: text_of(schema, "title", MAX_LABEL),
            fields,
            omitted,
        })
    }

    /// The fields that must be filled in but are not shown (past [`MAX_FIELDS`]): a form
    /// with any cannot be accepted.
    pub fn hides_required(&self, schema: &Value) -> bool {
        let shown: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
        (schema.get("required").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|name| !shown.contains(&name))
    }
}

/// The property names in `order`, then the others (deduplicated, only those that exist).
fn ordered<'a>(properties: &'a Map<String, Value>, order: &[String]) -> Vec<&'a String> {
    let listed = order
        .iter()
        .filter_map(|name| properties.get_key_value(name).map(|(k, _)| k));
    let mut seen = std::collections::HashSet::new();
    (listed.chain(properties.keys()))
        .filter(|name| seen.insert(*name))
        .collect()
}

#[cfg(test)]
#[path = "spec_tests.rs"]
pub(crate) mod tests;
