//! A command file's front matter: the YAML-ish block between `---` lines at its top, read
//! as `key: value` lines (a value may be quoted, a list may be `[a, b]`, `a, b` or `- a`
//! lines under its key). Only the keys taco uses are kept; others (Claude Code's
//! `disable-model-invocation` …) are ignored.

/// What the front matter says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Front {
    /// `description`.
    pub description: Option<String>,
    /// `argument-hint`.
    pub argument_hint: Option<String>,
    /// `allowed-tools`.
    pub allowed_tools: Option<Vec<String>>,
    /// `model`.
    pub model: Option<String>,
}

/// Splits `text` into its front matter and its body; a text without front matter is all
/// body. `Err` says why the front matter cannot be read.
pub fn split(text: &str) -> Result<(Front, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(after) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok((Front::default(), text));
    };
    let mut end = None;
    let mut offset = 0;
    for line in after.split_inclusive('\n') {
        if line.trim_end() == "---" {
            end = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    // A closing line at the very end without a newline.
    if end.is_none() && after[offset..].trim_end() == "---" {
        end = Some((offset, after.len()));
    }
    let Some((head_end, body_start)) = end else {
        return Err("its front matter has no closing `---` line".to_string());
    };
    let front = parse(&after[..head_end])?;
    Ok((front, &after[body_start..]))
}

/// The `key: value` lines.
fn parse(head: &str) -> Result<Front, String> {
    let mut front = Front::default();
    let mut list_key: Option<String> = None;
    let mut items: Vec<String> = Vec::new();
    for (n, line) in head.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if let Some(item) = trimmed
            .strip_prefix("- ")
            .or((trimmed == "-").then_some(""))
        {
            if list_key.is_none() {
                return Err(format!(
                    "front matter line {}: a list item under no key",
                    n + 1
                ));
            }
            items.push(unquote(item).to_string());
            continue;
        }
        if let Some(key) = list_key.take() {
            set(&mut front, &key, Value::List(std::mem::take(&mut items)));
        }
        let Some((key, value)) = trimmed.split_once(':') else {
            return Err(format!(
                "front matter line {} is not `key: value`: {}",
                n + 1,
                crate::text::summarize(trimmed, 60)
            ));
        };
        let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
        if value.is_empty() {
            list_key = Some(key);
            continue;
        }
        let value = match value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            Some(inner) => Value::List(words(inner)),
            None => Value::Text(unquote(value).to_string()),
        };
        set(&mut front, &key, value);
    }
    if let Some(key) = list_key {
        set(&mut front, &key, Value::List(items));
    }
    Ok(front)
}

/// A value as written: one text, or a list.
enum Value {
    Text(String),
    List(Vec<String>),
}

fn set(front: &mut Front, key: &str, value: Value) {
    let text = |value: Value| match value {
        Value::Text(text) => Some(text).filter(|t| !t.is_empty()),
        Value::List(items) => Some(items.join(", ")).filter(|t| !t.is_empty()),
    };
    match key {
        "description" => front.description = text(value),
        "argument-hint" | "argument_hint" => front.argument_hint = text(value),
        "model" => front.model = text(value),
        "allowed-tools" | "allowed_tools" => {
            let list = match value {
                Value::Text(text) => words(&text),
                Value::List(items) => items.iter().flat_map(|i| words(i)).collect(),
            };
            front.allowed_tools = Some(list);
        }
        _ => {}
    }
}

/// `a, b c`: the names, split at commas and blanks, unquoted.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .map(unquote)
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

fn unquote(text: &str) -> &str {
    let text = text.trim();
    for q in ['"', '\''] {
        if let Some(inner) = text.strip_prefix(q).and_then(|t| t.strip_suffix(q)) {
            return inner;
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_keys_lists_and_body() {
        let text = "---\ndescription: \"Review a PR\"\nargument-hint: [pr-number]\nallowed-tools: read_file, search_files\nmodel: small-model\nother: ignored\n---\nReview $ARGUMENTS\n";
        let (front, body) = split(text).unwrap();
        assert_eq!(front.description.as_deref(), Some("Review a PR"));
        assert_eq!(front.argument_hint.as_deref(), Some("pr-number"));
        assert_eq!(
            front.allowed_tools,
            Some(vec!["read_file".into(), "search_files".into()])
        );
        assert_eq!(front.model.as_deref(), Some("small-model"));
        assert_eq!(body, "Review $ARGUMENTS\n");
        let (front, _) =
            split("---\nallowed-tools:\n  - read_file\n  - 'list_dir'\n---\nx").unwrap();
        assert_eq!(
            front.allowed_tools,
            Some(vec!["read_file".into(), "list_dir".into()])
        );
        let (front, _) = split("---\nallowed-tools: [shell, \"read_file\"]\n---").unwrap();
        assert_eq!(
            front.allowed_tools,
            Some(vec!["shell".into(), "read_file".into()])
        );
    }

    #[test]
    fn no_front_matter_is_all_body_and_a_bad_one_says_why() {
        assert_eq!(split("Just text\n---\n").unwrap().1, "Just text\n---\n");
        assert!(
            split("---\ndescription: x\nno end")
                .unwrap_err()
                .contains("closing")
        );
        assert!(
            split("---\njust words\n---\n")
                .unwrap_err()
                .contains("key: value")
        );
        assert!(
            split("---\n- item\n---\n")
                .unwrap_err()
                .contains("under no key")
        );
    }
}
