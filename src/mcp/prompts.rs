//! A server's prompts (issue 28.5): what `prompts/list` offers (each becomes the slash
//! command `/server:prompt`), and what `prompts/get` returns made into the user's message:
//! texts as they are, embedded resources' text, images and audio named (never dropped
//! silently), the whole bounded to [`MAX_PROMPT_BYTES`].

use serde_json::Value;

/// Most bytes of a prompt's messages put into the conversation (as much as `@file`
/// attachments may add to one message).
pub const MAX_PROMPT_BYTES: usize = 256 * 1024;
/// Longest description kept from a listing.
const MAX_DESCRIPTION: usize = 300;

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArg {
    /// Its name (`name=value`).
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Whether the prompt needs it.
    pub required: bool,
}

/// A prompt a server offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInfo {
    /// The server.
    pub server: String,
    /// Its name on the server.
    pub name: String,
    /// What it does (its title or description, first line).
    pub description: String,
    /// Its arguments, in the server's order.
    pub arguments: Vec<PromptArg>,
}

impl PromptInfo {
    /// The slash command that runs it: `/server:prompt`.
    pub fn command(&self) -> String {
        format!("/{}:{}", self.server, self.name)
    }

    /// A `prompts/list` entry (JSON); `None` without a usable name.
    pub fn from_listed(server: &str, listed: &Value) -> Option<Self> {
        let name = listed["name"].as_str()?;
        // A name with a blank could not be typed as one word.
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return None;
        }
        let text = |v: &Value| v.as_str().map(one_line).unwrap_or_default();
        let description = match text(&listed["description"]) {
            d if d.is_empty() => text(&listed["title"]),
            d => d,
        };
        let arguments = listed["arguments"]
            .as_array()
            .map(|args| {
                args.iter()
                    .filter_map(|a| {
                        let name = a["name"].as_str().filter(|n| !n.is_empty())?;
                        Some(PromptArg {
                            name: name.to_string(),
                            description: text(&a["description"]),
                            required: a["required"].as_bool().unwrap_or(false),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(Self {
            server: server.to_string(),
            name: name.to_string(),
            description,
            arguments,
        })
    }
}

/// A prompt's messages as one user message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptText {
    /// What is sent as the user's message.
    pub text: String,
    /// What the user should know (a cut, parts not sent), plain text.
    pub notes: Vec<String>,
}

/// The first line of `text`, trimmed and cut to a listing's length.
fn one_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    crate::text::summarize(line.trim(), MAX_DESCRIPTION)
}

/// A size as people read it: `812 B`, `4.2 KB`, `1.3 MB` (1024-based, as `@file` chips).
pub fn size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} B")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{:.1} MB", b / (KB * KB))
    }
}

/// Cuts `text` to at most `max` bytes, at a char boundary.
pub fn cut(text: &mut String, max: usize) {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
}

/// Bytes a base64 string stands for.
fn decoded_size(base64: &str) -> u64 {
    (base64.trim_end_matches('=').len() as u64 * 3) / 4
}

/// One content block of a message in words for the model; notes what was not sent.
fn content_text(content: &Value, notes: &mut Vec<String>) -> String {
    let size = |data: &Value| size(decoded_size(data.as_str().unwrap_or("")));
    let mime = |v: &Value| v.as_str().unwrap_or("unknown type").to_string();
    match content["type"].as_str() {
        Some("text") => content["text"].as_str().unwrap_or("").to_string(),
        Some(kind @ ("image" | "audio")) => {
            let line = format!(
                "[{kind} from the prompt: {}, {}; not attached]",
                mime(&content["mimeType"]),
                size(&content["data"])
            );
            notes.push(format!(
                "the prompt's {kind} ({}) was not sent",
                mime(&content["mimeType"])
            ));
            line
        }
        Some("resource") => {
            let resource = &content["resource"];
            let uri = resource["uri"].as_str().unwrap_or("");
            match (resource["text"].as_str(), resource["blob"].as_str()) {
                (Some(text), _) => format!("Resource {uri}:\n{text}"),
                (None, Some(blob)) => {
                    notes.push(format!(
                        "the prompt's resource {uri} is binary and was not sent"
                    ));
                    format!(
                        "[resource {uri}: {}, {}; binary, not attached]",
                        mime(&resource["mimeType"]),
                        size(&Value::String(blob.to_string()))
                    )
                }
                (None, None) => format!("[resource {uri}: empty]"),
            }
        }
        Some("resource_link") => format!(
            "[resource link: {} ({})]",
            content["uri"].as_str().unwrap_or(""),
            content["name"].as_str().unwrap_or("")
        ),
        other => {
            let kind = other.unwrap_or("unknown");
            notes.push(format!("a part of kind {kind} was not sent"));
            format!("[{kind} content; not attached]")
        }
    }
}

/// A `prompts/get` result (JSON) as one user message, bounded: the messages in order, each
/// one that is not the user's marked with its role.
pub fn to_text(command: &str, result: &Value) -> PromptText {
    let mut notes = Vec::new();
    let mut parts = Vec::new();
    let empty = Vec::new();
    for message in result["messages"].as_array().unwrap_or(&empty) {
        let text = content_text(&message["content"], &mut notes);
        match message["role"].as_str() {
            Some("user") | None => parts.push(text),
            Some(role) => parts.push(format!("[{role}]\n{text}")),
        }
    }
    let mut text = parts.join("\n\n");
    if text.trim().is_empty() {
        notes.push(format!("{command} returned no text"));
    }
    if text.len() > MAX_PROMPT_BYTES {
        let whole = text.len() as u64;
        cut(&mut text, MAX_PROMPT_BYTES);
        let kept = size(text.len() as u64);
        let whole = size(whole);
        text.push_str(&format!(
            "\n\n(cut: the prompt is {whole}; only its first {kept} are sent)"
        ));
        notes.push(format!(
            "{command} returned {whole}: only its first {kept} are sent"
        ));
    }
    PromptText { text, notes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listed_prompt_keeps_its_arguments_and_first_line() {
        let listed = json!({
            "name": "greet",
            "description": "\nGreets.\nMore words.",
            "arguments": [{"name": "name", "required": true}, {"name": "style"}, {"x": 1}]
        });
        let prompt = PromptInfo::from_listed("fx", &listed).unwrap();
        assert_eq!(prompt.command(), "/fx:greet");
        assert_eq!(prompt.description, "Greets.");
        assert_eq!(prompt.arguments.len(), 2);
        assert!(prompt.arguments[0].required && !prompt.arguments[1].required);
        assert!(PromptInfo::from_listed("fx", &json!({"name": "a b"})).is_none());
        assert!(PromptInfo::from_listed("fx", &json!({})).is_none());
    }

    #[test]
    fn messages_become_one_user_text_and_nothing_is_dropped_silently() {
        let result = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "Review this."}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "x://n", "text": "the note"}}},
            {"role": "user", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}},
            {"role": "assistant", "content": {"type": "text", "text": "Sure."}}
        ]});
        let prompt = to_text("/fx:review", &result);
        assert_eq!(
            prompt.text,
            "Review this.\n\nResource x://n:\nthe note\n\n[image from the prompt: image/png, 3 B; not attached]\n\n[assistant]\nSure."
        );
        assert_eq!(
            prompt.notes,
            ["the prompt's image (image/png) was not sent"]
        );
    }

    #[test]
    fn a_huge_prompt_is_cut_with_a_note() {
        let result = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "é".repeat(MAX_PROMPT_BYTES)}}
        ]});
        let prompt = to_text("/fx:long", &result);
        assert!(prompt.text.len() < MAX_PROMPT_BYTES + 200);
        assert!(
            prompt.text.ends_with("only its first 256.0 KB are sent)"),
            "{}",
            &prompt.text[prompt.text.len() - 80..]
        );
        assert_eq!(prompt.notes.len(), 1);
    }
}
