//! `create_code` (spec/004's showcase tool): asks the model for the code in a nested call
//! without tools, then has it saved by a `write_file` call made first (approved like any
//! write, nested under this call), and reports what was saved.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::tools::{
    NeededCall, Policy, ToolContext, ToolError, ToolReply, ToolSettings, parse_params, schema_of,
};

/// The tool's name.
pub const NAME: &str = "create_code";
/// The tool that saves the code.
const SAVE: &str = "write_file";
/// The most code taken from the model (its answer is stopped past this as it streams).
pub const MAX_CODE_BYTES: usize = 256 * 1024;
/// The system prompt of the nested generation call (the demo provider recognises it).
pub const GENERATION_PROMPT: &str = "You write source code for taco's create_code tool. Answer with the complete contents of one source file and nothing else: no explanation before or after it, no Markdown code fence.";

/// Arguments of `create_code`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateCodeParams {
    /// What the code should do, in a sentence or two.
    pub description: String,
    /// The programming language (python, rust, javascript, …).
    pub language: String,
    /// File to save the code to, relative to the workspace root.
    pub path: String,
}

/// Generates code with the model and saves it with `write_file`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CreateCode;

impl crate::tools::Tool for CreateCode {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Write a new source file: the code is generated from a description in the given \
         language and saved to the path (the save is approved like any write_file). Returns \
         the path, the language and the number of lines."
    }

    fn parameters(&self) -> Value {
        schema_of::<CreateCodeParams>()
    }

    fn validate(&self, arguments: &Value) -> Result<(), String> {
        parse_params::<CreateCodeParams>(arguments).map(drop)
    }

    fn default_policy(&self, _arguments: &Value, _settings: &ToolSettings) -> Policy {
        // Generating asks nobody; the save is a write_file call under its own policy.
        Policy::Allow
    }

    fn policy_note(&self) -> &str {
        "allow (its save asks as write_file does)"
    }

    fn usage_instructions(&self) -> Option<&str> {
        Some(
            "Use it to create a new file of code from a description. Leave out language or path if the user did not say them: taco asks the user. The save asks for approval like write_file; if it is denied, do not retry.",
        )
    }

    fn call<'a>(
        &'a self,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>> {
        async move {
            let params = parse_params::<CreateCodeParams>(&arguments)
                .map_err(ToolError::InvalidArguments)?;
            let prompt = format!(
                "Language: {}\nFile: {}\nWhat the code should do: {}",
                params.language, params.path, params.description
            );
            let answer = ctx
                .generate(GENERATION_PROMPT, &prompt, MAX_CODE_BYTES)
                .await
                .map_err(|e| ToolError::failed(format!("the code could not be generated: {e}")))?;
            let code = code_of(&answer)?;
            let lines = code.lines().count();
            Ok(ToolReply::NeedsFirst {
                calls: vec![NeededCall {
                    name: SAVE.to_string(),
                    arguments: json!({"path": params.path, "content": code}),
                }],
                then: json!({"path": params.path, "language": params.language, "lines": lines}),
            })
        }
        .boxed()
    }

    fn resume<'a>(
        &'a self,
        then: Value,
        results: Vec<Result<Value, String>>,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolReply, ToolError>> {
        async move {
            match results.into_iter().next() {
                Some(Ok(saved)) => {
                    // The path as the write shows it (relative to the workspace).
                    let path = saved.get("path").cloned().unwrap_or(then["path"].clone());
                    Ok(ToolReply::Done(json!({
                        "path": path,
                        "language": then["language"],
                        "lines": then["lines"],
                    })))
                }
                Some(Err(error)) => Err(ToolError::failed(format!("the save failed: {error}"))),
                None => Err(ToolError::failed("the save did not run")),
            }
        }
        .boxed()
    }
}

/// The code in the model's answer: the body of its first fenced block when it has one (a
/// model that was told not to fence often does), else the whole answer; never empty, ending
/// in a newline.
pub fn code_of(answer: &str) -> Result<String, ToolError> {
    if answer.len() > MAX_CODE_BYTES {
        return Err(ToolError::failed(format!(
            "the generated code is longer than {} KiB; ask for something smaller",
            MAX_CODE_BYTES / 1024
        )));
    }
    let body = fenced(answer).unwrap_or(answer);
    let code = body.trim_matches(|c| c == '\n' || c == '\r');
    if code.trim().is_empty() {
        return Err(ToolError::failed("the model returned no code"));
    }
    Ok(format!("{}\n", code.trim_end()))
}

/// The body of the first fenced block (``` or ~~~, any info string); an unclosed fence runs
/// to the end.
fn fenced(text: &str) -> Option<&str> {
    let mut offset = 0;
    let mut open: Option<(&str, usize)> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        match open {
            None => {
                for fence in ["```", "~~~"] {
                    if trimmed.starts_with(fence) {
                        open = Some((fence, offset + line.len()));
                        break;
                    }
                }
            }
            Some((fence, start)) if trimmed.trim_end() == fence => {
                return Some(&text[start..offset]);
            }
            Some(_) => {}
        }
        offset += line.len();
    }
    open.map(|(_, start)| &text[start.min(text.len())..])
}

#[cfg(test)]
mod tests;
