//! The offline demo provider: deterministic, behind the same [`Provider`] port. For most
//! prompts it lists the workspace, asks to write a short note (so a first-time user meets an
//! approval), then streams an answer that says what happened; a prompt that asks to create a
//! program runs spec/004's `create_code` flow instead (`demo/create.rs`).

use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use futures_util::stream::{self, StreamExt};
use serde_json::{Value, json};

use super::{ChatRequest, Chunk, ChunkStream, Provider, ProviderError, ToolCallDelta};
use crate::conversation::{Message, Role, Usage};

mod create;

/// The file the demo asks to write.
pub const NOTE_PATH: &str = "taco-demo-note.md";
/// The note's first line, which a later visit edits under.
const NOTE_HEADING: &str = "# Note from the taco demo\n";

/// The demo provider.
#[derive(Debug, Clone)]
pub struct DemoProvider {
    pace: Duration,
}

impl DemoProvider {
    /// A demo that pauses `pace` between streamed pieces (zero: no pauses).
    pub fn new(pace: Duration) -> Self {
        Self { pace }
    }
}

impl Provider for DemoProvider {
    fn name(&self) -> &str {
        "demo"
    }

    fn model(&self) -> &str {
        "demo"
    }

    fn stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChunkStream, ProviderError>> {
        let chunks = script(&request);
        let pace = self.pace;
        async move {
            let stream = stream::iter(chunks).then(move |chunk| async move {
                if !pace.is_zero() && matches!(chunk, Chunk::Text(_) | Chunk::Reasoning(_)) {
                    tokio::time::sleep(pace).await;
                }
                Ok(chunk)
            });
            Ok(Box::pin(stream) as ChunkStream)
        }
        .boxed()
    }
}

/// What the demo says next, decided from the conversation since the last user message.
fn script(request: &ChatRequest<'_>) -> Vec<Chunk> {
    let messages = request.messages;
    let start = messages
        .iter()
        .rposition(|m| m.role == Role::User)
        .unwrap_or(0);
    let prompt = messages
        .get(start)
        .and_then(|m| m.content.as_deref())
        .unwrap_or("");
    let since = &messages[start..];
    let offered = |name: &str| request.tools.iter().any(|t| t.name == name);
    let result_of = |name: &str| {
        since
            .iter()
            .find(|m| m.role == Role::Tool && m.name.as_deref() == Some(name))
    };

    let mut out = Vec::new();
    if create::script(&mut out, request, prompt) {
        // A program to create, its nested generation, or the classifier's question.
    } else if offered("list_dir") && result_of("list_dir").is_none() {
        pieces(
            &mut out,
            true,
            &format!(
                "The user said \"{}\". I'll look at the workspace before answering.",
                short(prompt)
            ),
        );
        pieces(&mut out, false, "Let me look around the workspace first.");
        call(&mut out, messages.len(), "list_dir", json!({"path": "."}));
    } else if noted(result_of("list_dir"))
        && offered("edit_file")
        && result_of("edit_file").is_none()
    {
        // Its note from an earlier visit is there: a change, shown as a diff.
        pieces(
            &mut out,
            false,
            "My note from an earlier visit is here; I'll add this visit to it, so you can see a change reviewed as a diff.",
        );
        call(
            &mut out,
            messages.len(),
            "edit_file",
            json!({"path": NOTE_PATH, "edits": [{
                "old_string": NOTE_HEADING,
                "new_string": format!("{NOTE_HEADING}\nVisited again: {}\n", short(prompt)),
            }]}),
        );
    } else if !noted(result_of("list_dir"))
        && offered("write_file")
        && result_of("write_file").is_none()
    {
        pieces(
            &mut out,
            false,
            "Now I'll leave a short note, so you can see how approvals work.",
        );
        let note = format!(
            "{NOTE_HEADING}\nYou asked: {}\n\nThis file was written by the offline demo provider after you approved it.\n",
            short(prompt)
        );
        call(
            &mut out,
            messages.len(),
            "write_file",
            json!({"path": NOTE_PATH, "content": note}),
        );
    } else {
        pieces(
            &mut out,
            false,
            &answer(
                prompt,
                result_of("list_dir"),
                result_of("write_file").or(result_of("edit_file")),
                request.tools.is_empty(),
            ),
        );
        out.push(Chunk::Finish("stop".into()));
    }
    let input_tokens = messages
        .iter()
        .filter_map(|m| m.content.as_ref())
        .map(|c| c.len() as u64 / 4 + 1)
        .sum();
    let output_tokens = out
        .iter()
        .map(|c| match c {
            Chunk::Text(t) | Chunk::Reasoning(t) => t.split_whitespace().count() as u64,
            _ => 8,
        })
        .sum();
    out.push(Chunk::Usage(Usage {
        input_tokens,
        output_tokens,
        cached_tokens: 0,
    }));
    out
}

fn answer(
    prompt: &str,
    listed: Option<&Message>,
    written: Option<&Message>,
    no_tools: bool,
) -> String {
    let mut text = format!(
        "Hello! I'm the **demo provider**: offline and scripted, so you can try taco without an API key. You said: “{}”.\n\n",
        short(prompt)
    );
    if no_tools && listed.is_none() {
        text.push_str(
            "No tools were offered for this call, so I'm answering from what I have.\n\n",
        );
    } else {
        text.push_str("Here is what happened:\n\n");
        text.push_str(&format!("- {}\n", describe_listing(listed)));
        text.push_str(&format!("- {}\n\n", describe_write(written)));
    }
    text.push_str("To talk to a real model, set `OPENAI_API_KEY` (or `DEEPSEEK_API_KEY`, `OPENROUTER_API_KEY`, `GROQ_API_KEY`), start a local Ollama, or pick one with `-p`.");
    text
}

fn result_json(message: Option<&Message>) -> Option<Value> {
    serde_json::from_str(message?.content.as_deref()?).ok()
}

fn describe_listing(listed: Option<&Message>) -> String {
    let Some(value) = result_json(listed) else {
        return "I did not get to list the workspace.".to_string();
    };
    if let Some(error) = value.get("error").and_then(Value::as_str) {
        return format!("I could not list the workspace: {error}");
    }
    let names: Vec<&str> = value
        .get("entries")
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .filter_map(|e| e.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    match names.len() {
        0 => "I listed `.`: the workspace is empty.".to_string(),
        1 => format!("I listed `.` and found one entry: `{}`.", names[0]),
        n => {
            let shown: Vec<String> = names.iter().take(8).map(|n| format!("`{n}`")).collect();
            let more = if n > 8 {
                format!(" and {} more", n - 8)
            } else {
                String::new()
            };
            format!(
                "I listed `.` and found {n} entries: {}{more}.",
                shown.join(", ")
            )
        }
    }
}

/// Whether a `list_dir` result shows the demo's note (written on an earlier visit).
fn noted(listed: Option<&Message>) -> bool {
    result_json(listed)
        .and_then(|v| v.get("entries").cloned())
        .and_then(|e| e.as_array().cloned())
        .is_some_and(|entries| {
            entries
                .iter()
                .any(|e| e.get("name").and_then(Value::as_str) == Some(NOTE_PATH))
        })
}

fn describe_write(written: Option<&Message>) -> String {
    let Some(message) = written else {
        return "I did not get to write the note.".to_string();
    };
    let edited = message.name.as_deref() == Some("edit_file");
    let (verb, did) = if edited {
        ("Editing", "I added this visit to my note")
    } else {
        ("Writing", "I wrote a short note to")
    };
    let Some(value) = result_json(written) else {
        return "I did not get to write the note.".to_string();
    };
    match value.get("error").and_then(Value::as_str) {
        Some(error) if error.contains("denied") => {
            format!("{verb} `{NOTE_PATH}` was **denied**, so I left the workspace untouched.")
        }
        Some(error) => format!("{verb} `{NOTE_PATH}` failed: {error}"),
        None if edited => format!("{did} `{NOTE_PATH}` after you approved the diff."),
        None => format!("{did} `{NOTE_PATH}` after you approved it."),
    }
}

/// Splits text into small pieces (a word or two each) so it streams like a model.
fn pieces(out: &mut Vec<Chunk>, reasoning: bool, text: &str) {
    let mut piece = String::new();
    let mut words = 0;
    for (i, ch) in text.char_indices() {
        piece.push(ch);
        let at_word_end = ch == ' ' && !text[..i].ends_with(' ');
        if at_word_end {
            words += 1;
        }
        if (at_word_end && words % 2 == 0) || ch == '\n' {
            let done = std::mem::take(&mut piece);
            out.push(if reasoning {
                Chunk::Reasoning(done)
            } else {
                Chunk::Text(done)
            });
        }
    }
    if !piece.is_empty() {
        out.push(if reasoning {
            Chunk::Reasoning(piece)
        } else {
            Chunk::Text(piece)
        });
    }
}

fn call(out: &mut Vec<Chunk>, seq: usize, name: &str, arguments: Value) {
    out.push(Chunk::ToolCall(ToolCallDelta {
        index: 0,
        id: Some(format!("demo_{name}_{seq}")),
        name: Some(name.to_string()),
        arguments: arguments.to_string(),
    }));
    out.push(Chunk::Finish("tool_calls".into()));
}

fn short(prompt: &str) -> String {
    crate::text::summarize(prompt, 80)
}
