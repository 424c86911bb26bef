//! Is a reply to a parameter question an answer, or a new request (spec/004 "Context switch:
//! user asks unrelated question")? Cheap rules first, on the reply and the parameter's
//! schema; when they are unsure, one small model call without tools decides. A new request
//! abandons the workflow (`collect.rs`) and is handled as the user's next message.

use serde_json::Value;

use super::collect::Collected;
use super::conversation::Conversation;
use super::scope::{Pending, Run};
use crate::conversation::Message;
use crate::event::{EventData, InputRequest, Purpose, SwitchedBy, WorkflowAbandoned};

/// The classifier's system prompt.
const CLASSIFY_PROMPT: &str = "You classify one reply of a user. Answer with one word: yes or no.";
/// How much of the reply the classifier is shown.
const MAX_SHOWN: usize = 2000;
/// How many times longer than the expected value a reply of several words may be.
const LONGER: usize = 4;

/// What the rules make of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Judged {
    /// It answers the question.
    Answer,
    /// It is a new request; the rule that says so.
    NewRequest(SwitchedBy),
    /// The rules cannot tell: ask the model.
    Unsure,
}

/// What the classifier call said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// "yes": the reply answers the question.
    Answer,
    /// "no": it is something else.
    NewRequest,
}

impl Verdict {
    /// Reads the model's answer; anything but a clear "no" keeps the workflow (a wrong
    /// value is caught by validation, a lost request is not recoverable).
    pub(super) fn read(answer: &str) -> Self {
        let word: String = answer
            .trim_start_matches(|c: char| !c.is_alphanumeric())
            .chars()
            .take_while(|c| c.is_alphanumeric())
            .collect();
        if word.eq_ignore_ascii_case("no") {
            Self::NewRequest
        } else {
            Self::Answer
        }
    }
}

/// The asked parameter, as the rules look at it.
#[derive(Debug, Default)]
pub(super) struct Asked<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its JSON type (`string`, `integer`, …).
    pub kind: Option<&'a str>,
    /// Its description.
    pub description: Option<&'a str>,
    /// Its choices (an `enum`).
    pub choices: Vec<String>,
    /// Its `maxLength`.
    pub max_length: Option<usize>,
}

impl<'a> Asked<'a> {
    /// The parameter `name` of a tool's `schema`.
    pub(super) fn of(schema: &'a Value, name: &'a str) -> Self {
        let property = schema.get("properties").and_then(|p| p.get(name));
        let field = |key: &str| property.and_then(|p| p.get(key));
        let kind = field("type").and_then(|t| match t {
            Value::String(s) => Some(s.as_str()),
            Value::Array(types) => types
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null"),
            _ => None,
        });
        let choices = field("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| c.as_str().map_or_else(|| c.to_string(), String::from))
            .collect();
        Self {
            name,
            kind,
            description: field("description").and_then(Value::as_str),
            choices,
            max_length: field("maxLength")
                .and_then(Value::as_u64)
                .map(|n| n as usize),
        }
    }

    /// Whether the value names a file or directory (a reply starting with `/` may be one).
    fn is_path(&self) -> bool {
        let words = format!("{} {}", self.name, self.description.unwrap_or("")).to_lowercase();
        ["path", "file", "dir", "folder"]
            .iter()
            .any(|w| words.contains(w))
    }

    /// About how long a value is expected to be, in characters; `None` for free text.
    fn expected_len(&self) -> Option<usize> {
        if let Some(longest) = self.choices.iter().map(|c| c.chars().count()).max() {
            return Some(longest);
        }
        match self.kind {
            Some("integer" | "number") => return Some(20),
            Some("boolean") => return Some(5),
            _ => {}
        }
        if let Some(max) = self.max_length {
            return Some(max);
        }
        if self.is_path() {
            return Some(64);
        }
        let name = self.name.to_lowercase();
        let short = ["name", "language", "lang", "id", "url", "host"]
            .iter()
            .any(|w| name.contains(w));
        short.then_some(32)
    }

    /// Whether the reply shares something with what is asked: a choice, a word of the
    /// parameter's name or description, or a number for a numeric parameter.
    fn overlaps(&self, reply: &str) -> bool {
        let reply_words = words(reply);
        if matches!(self.kind, Some("integer" | "number"))
            && reply.chars().any(|c| c.is_ascii_digit())
        {
            return true;
        }
        let mut asked = words(self.name);
        asked.extend(words(self.description.unwrap_or("")));
        asked.extend(self.choices.iter().flat_map(|c| words(c)));
        asked.retain(|w| w.chars().count() >= 3 && !STOPWORDS.contains(&w.as_str()));
        reply_words.iter().any(|w| asked.contains(w))
    }
}

/// Words too common to count as overlap.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "you", "are", "what", "which", "this", "that", "with", "from", "one",
    "how", "can", "not", "its", "your", "have", "does", "will", "into", "e.g",
];

/// The lowercase words of `text` (letters, digits, `_`, `.`, `-`).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '-')))
        .map(|w| w.trim_matches('.').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The cheap rules: a slash command, a question that shares nothing with what is asked, a
/// reply of several words much longer than the value could be. A single word, a choice or a
/// number where one is asked, or words where free text is asked, is an answer; the rest
/// (several words for a short value, a question about what is asked) is unsure.
pub(super) fn judge(reply: &str, asked: &Asked<'_>) -> Judged {
    let reply = reply.trim();
    let first = reply.split_whitespace().next().unwrap_or("");
    let several = reply.split_whitespace().nth(1).is_some();
    // `/help`, `/model x`: a command, unless the value is a path and it could be one.
    let command = first.strip_prefix('/').is_some_and(|rest| {
        rest.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    });
    if command && (!asked.is_path() || several) {
        return Judged::NewRequest(SwitchedBy::SlashCommand);
    }
    if asked.choices.iter().any(|c| c.eq_ignore_ascii_case(reply)) {
        return Judged::Answer;
    }
    match asked.kind {
        Some("integer" | "number") if reply.parse::<f64>().is_ok() => return Judged::Answer,
        Some("boolean") if matches!(reply.to_lowercase().as_str(), "true" | "false") => {
            return Judged::Answer;
        }
        _ => {}
    }
    let question = reply.contains('?');
    if question && !asked.overlaps(reply) {
        return Judged::NewRequest(SwitchedBy::UnrelatedQuestion);
    }
    if !several && !question {
        return Judged::Answer;
    }
    match asked.expected_len() {
        // Free text: words are what is asked for; only a question leaves a doubt.
        None if question => Judged::Unsure,
        None => Judged::Answer,
        Some(expected) if several && reply.chars().count() > LONGER * expected.max(8) => {
            Judged::NewRequest(SwitchedBy::MuchLonger)
        }
        Some(_) => Judged::Unsure,
    }
}

impl Run<'_> {
    /// Whether `reply` to the parameter question `request` is a new request, and what said
    /// so; `None`: it is an answer. Asks the model (under the question's frame) only when
    /// the rules are unsure.
    pub(super) async fn new_request(
        &mut self,
        request: &InputRequest,
        schema: &Value,
        reply: &str,
    ) -> Option<SwitchedBy> {
        let name = request.parameter.as_deref().unwrap_or("");
        let asked = Asked::of(schema, name);
        match judge(reply, &asked) {
            Judged::Answer => None,
            Judged::NewRequest(rule) => Some(rule),
            Judged::Unsure => {
                let mut question = request.prompt.clone();
                if let Some(description) = &request.description {
                    question.push_str(&format!(" ({description})"));
                }
                let shown = crate::text::summarize(reply, MAX_SHOWN);
                let ask = format!(
                    "Is this reply an answer to: {question}? Answer yes or no.\n\nReply: {shown}"
                );
                let said = self
                    .nested_answer(&request.frame, Purpose::AnswerCheck, CLASSIFY_PROMPT, ask)
                    .await;
                // No verdict (the call failed): keep the workflow.
                match said.map(|s| Verdict::read(&s)) {
                    Ok(Verdict::NewRequest) => Some(SwitchedBy::Classifier),
                    Ok(Verdict::Answer) | Err(_) => None,
                }
            }
        }
    }
}

impl Run<'_> {
    /// The reply `request` to the question for `parameter` of `call` was a new request:
    /// says so, keeps the request for the user's conversation and abandons the call (the
    /// batch then clears the stack).
    pub(super) fn switch(
        &mut self,
        call: &Pending,
        parameter: &str,
        by: SwitchedBy,
        request: String,
    ) -> Collected {
        let request = self
            .orch
            .settings
            .tools
            .secrets
            .redact(&request)
            .into_owned();
        self.emit(EventData::WorkflowAbandoned(Box::new(WorkflowAbandoned {
            id: call.frame.clone(),
            tool: call.name.clone(),
            parameter: parameter.to_string(),
            by,
            request: request.clone(),
        })));
        self.switched = Some(request);
        Collected::Abandoned(format!(
            "the user did not answer '{parameter}' for this {} call and made a new request instead (their next message); the workflow was abandoned, do not resume it unless they ask",
            call.name
        ))
    }

    /// After a batch whose workflow was abandoned for a new request: the user's conversation
    /// takes the request as its next message, and the original request is now that one.
    /// `true` in a sub-agent's conversation, which stops: the request is its user's.
    pub(super) fn take_switch(&mut self, conv: &mut Conversation) -> bool {
        if conv.is_nested() {
            return self.switched.is_some();
        }
        if let Some(request) = self.switched.take() {
            self.original.clone_from(&request);
            conv.messages.push(Message::user(request));
        }
        false
    }
}

#[cfg(test)]
mod tests;
