//! The arguments of `/server:prompt args…`: `name=value` pairs, and for the rest positional
//! values in the prompt's argument order (quotes group words; extra words join the last
//! argument, so `/server:ask what is this?` needs no quotes). What is missing comes back as a
//! JSON-schema-like form ([`ArgsError::Missing`]), ready for a form dialog to ask.

use serde_json::{Map, Value, json};

use super::prompts::PromptArg;

/// Why a prompt's arguments cannot be sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArgsError {
    /// The text does not split into words (an open quote).
    #[error("{0}")]
    Syntax(String),
    /// `name=value` names no argument of the prompt.
    #[error(
        "{command} has no argument named {name} (its arguments: {known}); quote a value with = in it"
    )]
    Unknown {
        /// `/server:prompt`.
        command: String,
        /// The name given.
        name: String,
        /// Its arguments, listed.
        known: String,
    },
    /// Values given to a prompt that takes no arguments.
    #[error("{command} takes no arguments")]
    NoArguments {
        /// `/server:prompt`.
        command: String,
    },
    /// Required arguments not given.
    #[error("{command} needs {}: give {} as name=value or in order ({usage})", names.join(", "), if names.len() == 1 { "it" } else { "them" })]
    Missing {
        /// `/server:prompt`.
        command: String,
        /// The missing arguments' names, in the prompt's order.
        names: Vec<String>,
        /// How the command is used (`<name> [style]`).
        usage: String,
        /// The missing arguments as a JSON Schema object (properties with descriptions,
        /// `required`): what a form would ask. Boxed: an order-keeping map is large, and
        /// errors travel by value.
        form: Box<Value>,
    },
}

/// The prompt line's parts: `/server:prompt rest` → (server, prompt, rest); `None` when it is
/// not one (no `:`, an empty side, or not a slash command).
pub fn parse_line(line: &str) -> Option<(&str, &str, &str)> {
    let line = line.trim_start();
    let head = line.strip_prefix('/')?;
    let (name, rest) = head.split_once(char::is_whitespace).unwrap_or((head, ""));
    let (server, prompt) = name.split_once(':')?;
    (!server.is_empty() && !prompt.is_empty()).then_some((server, prompt, rest.trim()))
}

/// How a prompt's arguments are written after its name: `<name> [style]`.
pub fn usage(args: &[PromptArg]) -> String {
    let shown: Vec<String> = args
        .iter()
        .map(|a| {
            if a.required {
                format!("<{}>", a.name)
            } else {
                format!("[{}]", a.name)
            }
        })
        .collect();
    shown.join(" ")
}

/// A word and whether a quote opened before its first `=` (then it is a value, never a pair).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Word {
    text: String,
    quoted_key: bool,
}

/// Splits `raw` into words as a shell would: blanks separate, `"…"` and `'…'` group,
/// `\` escapes the next char outside single quotes.
fn words(raw: &str) -> Result<Vec<Word>, ArgsError> {
    let mut out = Vec::new();
    let mut word: Option<Word> = None;
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => out.extend(word.take()),
            '"' | '\'' => {
                let w = word.get_or_insert(Word {
                    text: String::new(),
                    quoted_key: false,
                });
                if !w.text.contains('=') {
                    w.quoted_key = true;
                }
                loop {
                    match chars.next() {
                        None => {
                            return Err(ArgsError::Syntax(format!("a quote ({c}) is not closed")));
                        }
                        Some(q) if q == c => break,
                        Some('\\') if c == '"' => {
                            if let Some(next) = chars.next() {
                                w.text.push(next);
                            }
                        }
                        Some(other) => w.text.push(other),
                    }
                }
            }
            '\\' => {
                let w = word.get_or_insert(Word {
                    text: String::new(),
                    quoted_key: false,
                });
                if let Some(next) = chars.next() {
                    w.text.push(next);
                }
            }
            c => word
                .get_or_insert(Word {
                    text: String::new(),
                    quoted_key: false,
                })
                .text
                .push(c),
        }
    }
    out.extend(word);
    Ok(out)
}

/// Whether `text` starts like `name=`: a name of letters, digits, `_` and `-`.
fn pair(text: &str) -> Option<(&str, &str)> {
    let (name, value) = text.split_once('=')?;
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    plain.then_some((name, value))
}

/// The arguments of `command` (`/server:prompt`, for messages) from `raw`, as the object
/// `prompts/get` takes; every value is a string, as the protocol says.
pub fn collect(
    command: &str,
    args: &[PromptArg],
    raw: &str,
) -> Result<Map<String, Value>, ArgsError> {
    let mut given: Map<String, Value> = Map::new();
    let mut positional = Vec::new();
    for word in words(raw)? {
        match pair(&word.text).filter(|_| !word.quoted_key) {
            Some((name, value)) if args.iter().any(|a| a.name == name) => {
                given.insert(name.to_string(), Value::String(value.to_string()));
            }
            Some((name, _)) if !args.is_empty() => {
                return Err(ArgsError::Unknown {
                    command: command.to_string(),
                    name: name.to_string(),
                    known: args
                        .iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
            _ => positional.push(word.text),
        }
    }
    if args.is_empty() && !(positional.is_empty() && given.is_empty()) {
        return Err(ArgsError::NoArguments {
            command: command.to_string(),
        });
    }
    // Positional values fill the arguments not named, in order; the last takes the rest.
    let open: Vec<&PromptArg> = args
        .iter()
        .filter(|a| !given.contains_key(&a.name))
        .collect();
    let mut values = positional.into_iter();
    for (i, arg) in open.iter().enumerate() {
        let value = if i + 1 == open.len() {
            let rest: Vec<String> = values.by_ref().collect();
            (!rest.is_empty()).then(|| rest.join(" "))
        } else {
            values.next()
        };
        if let Some(value) = value {
            given.insert(arg.name.clone(), Value::String(value));
        }
    }
    if let Some(form) = missing_form(args, &given) {
        let names = form["required"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|n| n.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        return Err(ArgsError::Missing {
            command: command.to_string(),
            names,
            usage: format!("{command} {}", usage(args)),
            form: Box::new(form),
        });
    }
    Ok(given)
}

/// The required arguments of `args` not in `given`, as a JSON Schema object of string
/// properties (title, description) with `required`; `None` when none is missing.
pub fn missing_form(args: &[PromptArg], given: &Map<String, Value>) -> Option<Value> {
    let missing: Vec<&PromptArg> = args
        .iter()
        .filter(|a| a.required && !given.contains_key(&a.name))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut properties = Map::new();
    for arg in &missing {
        let mut property = json!({"type": "string", "title": arg.name});
        if !arg.description.is_empty() {
            property["description"] = Value::String(arg.description.clone());
        }
        properties.insert(arg.name.clone(), property);
    }
    let required: Vec<&str> = missing.iter().map(|a| a.name.as_str()).collect();
    Some(json!({"type": "object", "properties": properties, "required": required}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(name: &str, required: bool) -> PromptArg {
        PromptArg {
            name: name.into(),
            description: format!("the {name}"),
            required,
        }
    }

    fn greet() -> Vec<PromptArg> {
        vec![arg("name", true), arg("style", false)]
    }

    fn ok(raw: &str) -> Value {
        Value::Object(collect("/s:greet", &greet(), raw).unwrap())
    }

    #[test]
    fn the_line_splits_into_server_prompt_and_arguments() {
        assert_eq!(
            parse_line("/fixture:greet  name=Bob x"),
            Some(("fixture", "greet", "name=Bob x"))
        );
        assert_eq!(parse_line("/fixture:greet"), Some(("fixture", "greet", "")));
        assert_eq!(parse_line("/help"), None);
        assert_eq!(parse_line("/:x"), None);
        assert_eq!(parse_line("hello /a:b"), None);
    }

    #[test]
    fn pairs_and_positional_values_fill_the_arguments() {
        assert_eq!(ok("name=Bob"), json!({"name": "Bob"}));
        assert_eq!(ok("Bob formal"), json!({"name": "Bob", "style": "formal"}));
        assert_eq!(
            ok("style=formal Bob"),
            json!({"name": "Bob", "style": "formal"})
        );
        assert_eq!(
            ok(r#""Bob Smith" very formal"#),
            json!({"name": "Bob Smith", "style": "very formal"})
        );
        assert_eq!(
            ok(r#"name='a "b"' style=x=y"#),
            json!({"name": "a \"b\"", "style": "x=y"})
        );
        // A quoted pair is a value.
        assert_eq!(ok(r#""name=Bob""#), json!({"name": "name=Bob"}));
        assert_eq!(ok(r"Bob\ Smith"), json!({"name": "Bob Smith"}));
    }

    #[test]
    fn missing_required_arguments_come_back_as_a_form() {
        let error = collect("/s:greet", &greet(), "style=formal").unwrap_err();
        let ArgsError::Missing { names, form, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(names, &["name"]);
        assert_eq!(
            &**form,
            &json!({
                "type": "object",
                "properties": {"name": {"type": "string", "title": "name", "description": "the name"}},
                "required": ["name"]
            })
        );
        assert_eq!(
            error.to_string(),
            "/s:greet needs name: give it as name=value or in order (/s:greet <name> [style])"
        );
        assert_eq!(
            missing_form(&greet(), &Map::new()).unwrap()["required"],
            json!(["name"])
        );
    }

    #[test]
    fn bad_input_gets_a_clear_error() {
        let unknown = collect("/s:greet", &greet(), "nmae=Bob").unwrap_err();
        assert!(
            unknown
                .to_string()
                .contains("no argument named nmae (its arguments: name, style)"),
            "{unknown}"
        );
        let open = collect("/s:greet", &greet(), "\"Bob").unwrap_err();
        assert_eq!(open.to_string(), "a quote (\") is not closed");
        let none = collect("/s:review", &[], "x").unwrap_err();
        assert_eq!(none.to_string(), "/s:review takes no arguments");
        assert_eq!(collect("/s:review", &[], "  ").unwrap(), Map::new());
        assert_eq!(usage(&greet()), "<name> [style]");
    }
}
