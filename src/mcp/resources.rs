//! A server's resources (issue 28.5): what `resources/list` and `resources/templates/list`
//! offer (the composer's `@server:uri` completion), and what `resources/read` returns made
//! into attachable parts: text within a byte budget (cut with a note), binary content named
//! with its type and size, never inlined.

use serde_json::Value;

use super::prompts::{cut, size};

/// A resource (or resource template) a server offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceInfo {
    /// The server.
    pub server: String,
    /// Its URI (a template's URI template, e.g. `file:///{path}`).
    pub uri: String,
    /// Its name.
    pub name: String,
    /// What it is (its description's first line).
    pub description: String,
    /// Its MIME type, if the server says.
    pub mime: Option<String>,
    /// It is a template: its URI is filled in before it is read.
    pub template: bool,
}

impl ResourceInfo {
    /// How it is mentioned in the composer: `@server:uri`.
    pub fn mention(&self) -> String {
        format!("@{}:{}", self.server, self.uri)
    }

    /// A `resources/list` entry (or, with `template`, a `resources/templates/list` one).
    pub fn from_listed(server: &str, listed: &Value, template: bool) -> Option<Self> {
        let key = if template { "uriTemplate" } else { "uri" };
        let uri = listed[key].as_str()?;
        // A URI with a blank could not be typed as one word.
        if uri.is_empty() || uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return None;
        }
        let line = |v: &Value| {
            let text = v.as_str().unwrap_or("");
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            crate::text::summarize(first.trim(), 200)
        };
        Some(Self {
            server: server.to_string(),
            uri: uri.to_string(),
            name: line(&listed["name"]),
            description: line(&listed["description"]),
            mime: listed["mimeType"]
                .as_str()
                .map(|m| crate::text::summarize(m, 80)),
            template,
        })
    }
}

/// One part of a resource as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text, perhaps cut to the budget.
    Text {
        /// The part's URI.
        uri: String,
        /// Its MIME type, if said.
        mime: Option<String>,
        /// The text kept.
        text: String,
        /// Its whole size in bytes.
        size: u64,
        /// It was cut to the budget.
        cut: bool,
    },
    /// Binary content: named, not inlined.
    Binary {
        /// The part's URI.
        uri: String,
        /// Its MIME type, if said.
        mime: Option<String>,
        /// Its size in bytes (decoded).
        size: u64,
    },
}

impl Part {
    /// The part in words for the model when it is not text (`[binary … not attached]`).
    pub fn describe_binary(mime: Option<&str>, bytes: u64) -> String {
        format!(
            "[binary content: {}, {}; not attached]",
            mime.unwrap_or("unknown type"),
            size(bytes)
        )
    }
}

/// A `resources/read` result (JSON) as parts; `budget` bytes of text in all are kept, the
/// rest cut (each cut part says so).
pub fn to_parts(result: &Value, budget: usize) -> Vec<Part> {
    let mut left = budget;
    let empty = Vec::new();
    let contents = result["contents"].as_array().unwrap_or(&empty);
    contents
        .iter()
        .map(|content| {
            let uri = content["uri"].as_str().unwrap_or("").to_string();
            let mime = content["mimeType"].as_str().map(String::from);
            match (content["text"].as_str(), content["blob"].as_str()) {
                (Some(text), _) => {
                    let whole = text.len();
                    let mut text = text.to_string();
                    cut(&mut text, left);
                    left -= text.len();
                    Part::Text {
                        uri,
                        mime,
                        cut: text.len() < whole,
                        text,
                        size: whole as u64,
                    }
                }
                (None, blob) => Part::Binary {
                    uri,
                    mime,
                    size: (blob.unwrap_or("").trim_end_matches('=').len() as u64 * 3) / 4,
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn listed_resources_and_templates_become_mentions() {
        let r = ResourceInfo::from_listed(
            "fx",
            &json!({"uri": "fx://a.txt", "name": "a", "mimeType": "text/plain"}),
            false,
        )
        .unwrap();
        assert_eq!(r.mention(), "@fx:fx://a.txt");
        let t = ResourceInfo::from_listed(
            "fx",
            &json!({"uriTemplate": "fx://e/{w}", "name": "e"}),
            true,
        )
        .unwrap();
        assert!(t.template);
        assert!(ResourceInfo::from_listed("fx", &json!({"uri": "a b"}), false).is_none());
    }

    #[test]
    fn text_is_cut_to_the_budget_and_binary_is_named() {
        let result = json!({"contents": [
            {"uri": "fx://a", "mimeType": "text/plain", "text": "0123456789"},
            {"uri": "fx://b", "text": "more"},
            {"uri": "fx://c", "mimeType": "image/png", "blob": "AAAAAA=="}
        ]});
        let parts = to_parts(&result, 12);
        assert_eq!(
            parts[0],
            Part::Text {
                uri: "fx://a".into(),
                mime: Some("text/plain".into()),
                text: "0123456789".into(),
                size: 10,
                cut: false
            }
        );
        assert!(matches!(&parts[1], Part::Text { text, cut: true, size: 4, .. } if text == "mo"));
        assert_eq!(
            parts[2],
            Part::Binary {
                uri: "fx://c".into(),
                mime: Some("image/png".into()),
                size: 4
            }
        );
        assert_eq!(
            Part::describe_binary(Some("image/png"), 4),
            "[binary content: image/png, 4 B; not attached]"
        );
    }
}
