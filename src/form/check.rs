//! Whether a form's values hold: our own words for the usual limits (range, length, how many
//! picked), then each field's own schema through `jsonschema` with formats checked (email,
//! uri, date, date-time), so whatever else the server asked for is held to as well. The
//! reason comes back as a short phrase to show beside the field.

use serde_json::{Map, Value};

use super::spec::{Field, FieldKind, FormSpec};

/// A field's schema compiled once, for the life of the form.
pub struct Checker {
    validators: Vec<Option<jsonschema::Validator>>,
}

impl std::fmt::Debug for Checker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checker")
            .field("fields", &self.validators.len())
            .finish()
    }
}

/// A validator for `schema` that checks formats too; `None` when it does not compile (the
/// own checks still hold).
fn validator(schema: &Value) -> Option<jsonschema::Validator> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .ok()
}

/// What a format looks like, for its reason.
fn example(format: &str) -> Option<&'static str> {
    Some(match format {
        "email" => "name@example.com",
        "uri" => "https://example.com/page",
        "date" => "YYYY-MM-DD",
        "date-time" => "YYYY-MM-DDThh:mm:ssZ",
        _ => return None,
    })
}

/// What the format of a text field looks like, when it is one taco knows.
fn format_example(field: &Field) -> Option<&'static str> {
    match &field.kind {
        FieldKind::Text {
            format: Some(format),
            ..
        } => example(format),
        _ => None,
    }
}

/// `12`, `3.5`: a number as a person writes it.
fn shown(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// A number typed into a field: a whole number for an integer field.
pub fn parse_number(text: &str, integer: bool) -> Result<Value, String> {
    let text = text.trim();
    if integer {
        if let Ok(n) = text.parse::<i64>() {
            return Ok(Value::from(n));
        }
        return Err(if text.parse::<f64>().is_ok() {
            "must be a whole number".to_string()
        } else {
            "not a number".to_string()
        });
    }
    match text.parse::<f64>() {
        Ok(n) if n.is_finite() => Ok(serde_json::Number::from_f64(n)
            .map(Value::Number)
            .unwrap_or(Value::Null)),
        _ => Err("not a number".to_string()),
    }
}

/// The own check of `value` for `field`: the reason it fails, if it does.
fn own_check(field: &Field, value: &Value) -> Option<String> {
    match &field.kind {
        // The format is the field's own schema's to check, compiled once (see `check`).
        FieldKind::Text {
            min_length,
            max_length,
            ..
        } => {
            let text = value.as_str()?;
            let chars = text.chars().count() as u64;
            if let Some(min) = min_length.filter(|min| chars < *min) {
                return Some(format!("at least {min} characters"));
            }
            max_length
                .filter(|max| chars > *max)
                .map(|max| format!("at most {max} characters"))
        }
        FieldKind::Number {
            minimum, maximum, ..
        } => {
            let n = value.as_f64()?;
            match (minimum, maximum) {
                (Some(min), Some(max)) if n < *min || n > *max => {
                    Some(format!("must be {} to {}", shown(*min), shown(*max)))
                }
                (Some(min), _) if n < *min => Some(format!("must be at least {}", shown(*min))),
                (_, Some(max)) if n > *max => Some(format!("must be at most {}", shown(*max))),
                _ => None,
            }
        }
        FieldKind::Toggle => None,
        FieldKind::Choice { options } => {
            (!options.iter().any(|o| o.value == *value)).then(|| "not one of the options".into())
        }
        FieldKind::Multi {
            options,
            min_items,
            max_items,
        } => {
            let picked = value.as_array()?;
            let count = picked.len() as u64;
            if picked
                .iter()
                .any(|p| !options.iter().any(|o| o.value == *p))
            {
                return Some("not one of the options".into());
            }
            if let Some(min) = min_items.filter(|min| count < *min) {
                return Some(format!("pick at least {min}"));
            }
            max_items
                .filter(|max| count > *max)
                .map(|max| format!("pick at most {max}"))
        }
    }
}

impl Checker {
    /// Compiles each field's schema of `spec`.
    pub fn new(spec: &FormSpec) -> Self {
        Self {
            validators: spec.fields.iter().map(|f| validator(&f.schema)).collect(),
        }
    }

    /// Whether `value` holds for field `index` (`field`): the reason when it does not.
    pub fn check(&self, index: usize, field: &Field, value: &Value) -> Result<(), String> {
        if let Some(reason) = own_check(field, value) {
            return Err(reason);
        }
        let Some(Some(validator)) = self.validators.get(index) else {
            return Ok(());
        };
        let Some(error) = validator.iter_errors(value).next() else {
            return Ok(());
        };
        // A format it does not hold says what the format looks like.
        if let (jsonschema::error::ValidationErrorKind::Format { format }, Some(example)) =
            (error.kind(), format_example(field))
        {
            return Err(format!("not a valid {format} ({example})"));
        }
        Err(crate::text::summarize(&error.to_string(), 120))
    }
}

/// Whether `content` holds against the whole requested `schema` (formats checked): the
/// last word before a form's answer goes to the server.
pub fn check_content(schema: &Value, content: &Map<String, Value>) -> Result<(), String> {
    let Some(validator) = validator(schema) else {
        return Ok(());
    };
    let content = Value::Object(content.clone());
    match validator.iter_errors(&content).next() {
        None => Ok(()),
        Some(error) => {
            let at = error.instance_path().to_string();
            Err(crate::text::summarize(&format!("{at}: {error}"), 200))
        }
    }
}

#[cfg(test)]
#[path = "check_tests.rs"]
mod tests;
