//! What an MCP tool's result becomes for the model: text content joined, structured content
//! kept as JSON, images, audio and resources summarised (type, size, URI) rather than pasted
//! as base64, and `isError` a tool failure. Works on the result's JSON, so content types a
//! newer server sends are summarised instead of breaking the call.

use serde_json::{Map, Value, json};

/// The model's view of a `tools/call` result (`result` is its JSON); `Err` for `isError`.
pub fn convert(result: &Value) -> Result<Value, String> {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut texts = Vec::new();
    let mut attachments = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = block.get("text").and_then(Value::as_str) {
                    texts.push(text.to_string());
                }
            }
            Some(kind @ ("image" | "audio")) => attachments.push(media(kind, block)),
            Some("resource_link") => attachments.push(link(block)),
            Some("resource") => {
                let resource = block.get("resource").unwrap_or(&Value::Null);
                match resource.get("text").and_then(Value::as_str) {
                    Some(text) => texts.push(text.to_string()),
                    None => attachments.push(link(resource)),
                }
            }
            other => attachments.push(json!({"type": other.unwrap_or("unknown")})),
        }
    }
    let text = texts.join("\n");
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(if text.is_empty() {
            "the tool reported an error (no message)".to_string()
        } else {
            text
        });
    }
    let mut out = Map::new();
    if !text.is_empty() || (attachments.is_empty() && result.get("structuredContent").is_none()) {
        out.insert("text".into(), Value::String(text));
    }
    if let Some(structured) = result.get("structuredContent") {
        out.insert("structured".into(), structured.clone());
    }
    if !attachments.is_empty() {
        out.insert("attachments".into(), Value::Array(attachments));
    }
    Ok(Value::Object(out))
}

/// An image or audio block without its bytes: type, MIME type and decoded size.
fn media(kind: &str, block: &Value) -> Value {
    let data = block
        .get("data")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // Base64: 4 characters carry 3 bytes.
    let bytes = data.trim_end_matches('=').len() * 3 / 4;
    json!({
        "type": kind,
        "mime_type": block.get("mimeType").and_then(Value::as_str).unwrap_or("unknown"),
        "bytes": bytes,
    })
}

/// A resource by reference: its URI, name and MIME type when given.
fn link(resource: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), json!("resource"));
    for (from, to) in [("uri", "uri"), ("name", "name"), ("mimeType", "mime_type")] {
        if let Some(value) = resource.get(from).and_then(Value::as_str) {
            out.insert(to.into(), json!(value));
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_joined_and_structured_content_kept() {
        let result = json!({
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "structuredContent": {"sum": 3}
        });
        assert_eq!(
            convert(&result).unwrap(),
            json!({"text": "a\nb", "structured": {"sum": 3}})
        );
        assert_eq!(convert(&json!({})).unwrap(), json!({"text": ""}));
    }

    #[test]
    fn media_and_resources_are_summarised_never_pasted() {
        let result = json!({"content": [
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a"},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA"}},
            {"type": "resource", "resource": {"uri": "file:///c.txt", "text": "inline"}},
            {"type": "hologram"}
        ]});
        let converted = convert(&result).unwrap();
        assert_eq!(converted["text"], "inline");
        let attachments = converted["attachments"].as_array().unwrap();
        assert_eq!(
            attachments[0],
            json!({"type": "image", "mime_type": "image/png", "bytes": 8})
        );
        assert_eq!(attachments[1]["uri"], "file:///a.txt");
        assert_eq!(attachments[2]["uri"], "file:///b.bin");
        assert_eq!(attachments[3], json!({"type": "hologram"}));
        assert!(
            !converted.to_string().contains("iVBOR"),
            "no base64 reaches the model"
        );
    }

    #[test]
    fn is_error_is_a_tool_failure_with_its_text() {
        let failed = json!({"isError": true, "content": [{"type": "text", "text": "nope"}]});
        assert_eq!(convert(&failed).unwrap_err(), "nope");
        let silent = json!({"isError": true, "content": []});
        assert!(convert(&silent).unwrap_err().contains("no message"));
    }
}
