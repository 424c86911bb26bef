//! The demo's spec/004 flow: a prompt that asks to create a program calls `create_code`
//! without a path (so taco collects it, nests the save's approval and unwinds the stack),
//! answers the nested generation call with code for the language, and answers the
//! classifier's "is this reply an answer?" call.

use serde_json::{Value, json};

use super::{call, pieces, short};
use crate::conversation::{Message, Role};
use crate::provider::{ChatRequest, Chunk};
use crate::tools::builtin::create_code::{GENERATION_PROMPT, NAME};

/// The question the orchestrator asks when its rules cannot tell (`orchestrator/reply.rs`).
const CLASSIFY: &str = "Is this reply an answer to:";

/// A language the demo writes: its names, the file extension, how it runs and its code.
struct Language {
    names: &'static [&'static str],
    extension: &'static str,
    run: &'static str,
    code: fn(&str) -> String,
}

const LANGUAGES: &[Language] = &[
    Language {
        names: &["python", "py"],
        extension: "py",
        run: "python3",
        code: |what| {
            format!(
                "# {what}\n\n\ndef main():\n    print(\"Hello, world!\")\n\n\nif __name__ == \"__main__\":\n    main()\n"
            )
        },
    },
    Language {
        names: &["rust"],
        extension: "rs",
        run: "rustc",
        code: |what| format!("// {what}\n\nfn main() {{\n    println!(\"Hello, world!\");\n}}\n"),
    },
    Language {
        names: &["javascript", "js", "node"],
        extension: "js",
        run: "node",
        code: |what| format!("// {what}\n\nconsole.log(\"Hello, world!\");\n"),
    },
    Language {
        names: &["go", "golang"],
        extension: "go",
        run: "go run",
        code: |what| {
            format!(
                "// {what}\npackage main\n\nimport \"fmt\"\n\nfunc main() {{\n\tfmt.Println(\"Hello, world!\")\n}}\n"
            )
        },
    },
    Language {
        names: &["c"],
        extension: "c",
        run: "cc",
        code: |what| {
            format!(
                "/* {what} */\n#include <stdio.h>\n\nint main(void) {{\n    printf(\"Hello, world!\\n\");\n    return 0;\n}}\n"
            )
        },
    },
    Language {
        names: &["bash", "shell", "sh"],
        extension: "sh",
        run: "sh",
        code: |what| format!("#!/bin/sh\n# {what}\n\necho \"Hello, world!\"\n"),
    },
    Language {
        names: &["ruby", "rb"],
        extension: "rb",
        run: "ruby",
        code: |what| format!("# {what}\n\nputs \"Hello, world!\"\n"),
    },
];

/// The lowercase words of a text.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | '+' | '#')))
        .map(|w| w.trim_end_matches('.').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

fn language(name: &str) -> Option<&'static Language> {
    let name = name.trim().to_lowercase();
    LANGUAGES.iter().find(|l| l.names.contains(&name.as_str()))
}

/// Whether a prompt asks to create a program.
fn asks_to_create(prompt: &str) -> bool {
    let words = words(prompt);
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    has(&["create", "write", "make", "generate"])
        && has(&["program", "script", "code", "app", "function"])
}

/// Adds the demo's next step of the create flow to `out`; `false` when the request is not
/// part of it (the rest of the demo answers).
pub(super) fn script(out: &mut Vec<Chunk>, request: &ChatRequest<'_>, prompt: &str) -> bool {
    let messages = request.messages;
    let system = messages
        .first()
        .filter(|m| m.role == Role::System)
        .and_then(|m| m.content.as_deref())
        .unwrap_or("");
    if request.tools.is_empty() && system.starts_with(GENERATION_PROMPT) {
        generate(out, prompt);
        return true;
    }
    if request.tools.is_empty() && prompt.starts_with(CLASSIFY) {
        classify(out, prompt);
        return true;
    }
    let offered = request.tools.iter().any(|t| t.name == NAME);
    let start = messages
        .iter()
        .rposition(|m| m.role == Role::User)
        .unwrap_or(0);
    let result = messages[start..]
        .iter()
        .find(|m| m.role == Role::Tool && m.name.as_deref() == Some(NAME));
    match result {
        Some(result) => {
            // Whether taco asked the user for the path (the model's call had none).
            let collected = messages[start..]
                .iter()
                .flat_map(|m| &m.tool_calls)
                .any(|c| c.name == NAME && c.arguments.get("path").is_none());
            pieces(out, false, &answer(result, collected));
            out.push(Chunk::Finish("stop".into()));
            true
        }
        None if offered && asks_to_create(prompt) => {
            propose(out, prompt, messages.len());
            true
        }
        None => false,
    }
}

/// The call: `create_code` with what the prompt says, the path left out unless it names
/// a file (taco asks the user for it).
fn propose(out: &mut Vec<Chunk>, prompt: &str, seq: usize) {
    let words = words(prompt);
    let lang = words.iter().find_map(|w| language(w));
    let file = words.iter().find(|w| {
        w.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty() && LANGUAGES.iter().any(|l| l.extension == ext)
        })
    });
    let mut description = prompt.trim().trim_end_matches(['.', '!', '?']);
    for verb in ["please ", "create ", "write ", "make ", "generate "] {
        if let Some(rest) = without_prefix(description, verb) {
            description = rest;
        }
    }
    if let Some(file) = file {
        for how in ["as", "called", "named", "in", "to"] {
            if let Some(rest) = without_suffix(description, &format!(" {how} {file}")) {
                description = rest;
            }
        }
    }
    for name in lang.map_or(&[][..], |l| l.names) {
        if let Some(rest) = without_suffix(description, &format!(" in {name}")) {
            description = rest;
        }
    }
    pieces(
        out,
        true,
        &format!(
            "The user wants a program: \"{}\". create_code generates and saves it.",
            short(prompt)
        ),
    );
    let mut arguments = json!({ "description": description.trim() });
    let missing = match (lang, file) {
        (Some(l), Some(f)) => {
            arguments["language"] = json!(l.names[0]);
            arguments["path"] = json!(f);
            "It will ask you to approve the save."
        }
        (Some(l), None) => {
            arguments["language"] = json!(l.names[0]);
            "You didn't say where to save it, so taco will ask you for a path, then for your approval of the save."
        }
        (None, _) => {
            "You didn't say which language or where to save it, so taco will ask you for both, then for your approval of the save."
        }
    };
    pieces(
        out,
        false,
        &format!("I'll write that with create_code. {missing}"),
    );
    call(out, seq, NAME, arguments);
}

/// `text` without `prefix` (ASCII, any case).
fn without_prefix<'t>(text: &'t str, prefix: &str) -> Option<&'t str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| text.get(prefix.len()..))
        .flatten()
}

/// `text` without `suffix` (ASCII, any case).
fn without_suffix<'t>(text: &'t str, suffix: &str) -> Option<&'t str> {
    let at = text.len().checked_sub(suffix.len())?;
    let tail = text.get(at..)?;
    tail.eq_ignore_ascii_case(suffix)
        .then(|| text.get(..at))
        .flatten()
}

/// The nested generation call: the code for the language, fenced (taco strips the fence).
fn generate(out: &mut Vec<Chunk>, prompt: &str) {
    let field = |name: &str| {
        prompt
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .unwrap_or("")
    };
    let what = field("What the code should do:");
    let lang = language(field("Language:")).unwrap_or(&LANGUAGES[0]);
    let code = (lang.code)(if what.is_empty() {
        "hello, world"
    } else {
        what
    });
    pieces(out, false, &format!("```{}\n{code}```\n", lang.names[0]));
    out.push(Chunk::Finish("stop".into()));
}

/// The classifier: a reply of one or two words answers the question; more is a new request.
fn classify(out: &mut Vec<Chunk>, prompt: &str) {
    let reply = prompt
        .rsplit_once("\nReply: ")
        .map_or("", |(_, reply)| reply);
    let verdict = if reply.split_whitespace().count() <= 2 {
        "yes"
    } else {
        "no"
    };
    out.push(Chunk::Text(verdict.into()));
    out.push(Chunk::Finish("stop".into()));
}

/// What the demo says once `create_code` has ended.
fn answer(result: &Message, collected: bool) -> String {
    let value: Value = result
        .content
        .as_deref()
        .and_then(|c| serde_json::from_str(c).ok())
        .unwrap_or(Value::Null);
    if let Some(error) = value.get("error").and_then(Value::as_str) {
        return if error.contains("denied") {
            "Saving the code was **denied**, so nothing was written.".to_string()
        } else if error.contains("invalid arguments") {
            "create_code needs a language and a path, and no one could be asked for them here (`taco exec` asks nobody). Name both in the request, e.g. “create a hello world program in python as hello.py”.".to_string()
        } else {
            format!("create_code did not finish: {error}")
        };
    }
    let path = value.get("path").and_then(Value::as_str).unwrap_or("?");
    let lang = value.get("language").and_then(Value::as_str).unwrap_or("");
    let lines = value.get("lines").and_then(Value::as_u64).unwrap_or(0);
    let mut text = format!(
        "I created `{path}`: {lines} lines of {lang}, generated by a nested model call and saved after you approved the write."
    );
    if let Some(l) = language(lang) {
        text.push_str(&format!(" Try it: `{} {path}`.", l.run));
    }
    if collected {
        text.push_str("\n\nThe tool stack went `[create_code]` → `[create_code, collect_tool_parameters]` → `[create_code]` → `[create_code, write_file]` → `[create_code]` → `[]`.");
    }
    text
}
