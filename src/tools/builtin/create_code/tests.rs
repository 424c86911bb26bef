use super::*;
use crate::tools::{Generate, Progress, Tool};

#[test]
fn a_fenced_answer_keeps_only_the_code() {
    let answer = "```python\nprint(\"hi\")\n```\n";
    assert_eq!(code_of(answer).unwrap(), "print(\"hi\")\n");
    let chatty = "Here it is:\n\n~~~rust\nfn main() {}\n~~~\nEnjoy!";
    assert_eq!(code_of(chatty).unwrap(), "fn main() {}\n");
    let unclosed = "```\nlet x = 1;\nlet y = 2;";
    assert_eq!(code_of(unclosed).unwrap(), "let x = 1;\nlet y = 2;\n");
}

#[test]
fn a_bare_answer_is_the_code_with_a_final_newline() {
    assert_eq!(code_of("\n\necho hi").unwrap(), "echo hi\n");
    assert_eq!(
        code_of("  indented\n  kept\n\n").unwrap(),
        "  indented\n  kept\n"
    );
}

#[test]
fn empty_and_oversized_answers_fail() {
    assert!(code_of("").is_err());
    assert!(code_of("```python\n\n```").is_err());
    let huge = "x".repeat(MAX_CODE_BYTES + 1);
    let Err(ToolError::Failed(text)) = code_of(&huge) else {
        panic!("too long");
    };
    assert!(text.contains("256 KiB"), "{text}");
}

#[test]
fn every_parameter_is_required() {
    let schema = CreateCode.parameters();
    let mut required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["description", "language", "path"]);
}

/// Answers the tool's generation request like the orchestrator would, with `answer`.
async fn run_with(answer: Result<String, String>) -> Result<ToolReply, ToolError> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = ToolContext {
        workdir: std::env::temp_dir(),
        settings: Default::default(),
        cancel: Default::default(),
        call: "c1".into(),
        progress: Some(tx),
        seen: None,
        trace: None,
    };
    let arguments = json!({"description": "say hi", "language": "python", "path": "hi.py"});
    let asked = tokio::spawn(async move {
        let Some(Progress::Generate(Generate {
            call,
            system,
            prompt,
            max_bytes,
            reply,
            ..
        })) = rx.recv().await
        else {
            panic!("the tool asks the model");
        };
        let _ = reply.send(answer);
        (call, system, prompt, max_bytes)
    });
    let reply = CreateCode.call(arguments, &ctx).await;
    let (call, system, prompt, max_bytes) = asked.await.unwrap();
    assert_eq!(call, "c1");
    assert_eq!(system, GENERATION_PROMPT);
    assert!(
        prompt.contains("python") && prompt.contains("hi.py") && prompt.contains("say hi"),
        "{prompt}"
    );
    assert_eq!(max_bytes, MAX_CODE_BYTES);
    reply
}

#[tokio::test]
async fn the_code_is_saved_by_a_write_file_call_made_first() {
    let reply = run_with(Ok("```python\nprint('hi')\nprint('bye')\n```".into())).await;
    let Ok(ToolReply::NeedsFirst { calls, then }) = reply else {
        panic!("{reply:?}");
    };
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "write_file");
    assert_eq!(
        calls[0].arguments,
        json!({"path": "hi.py", "content": "print('hi')\nprint('bye')\n"})
    );
    let ctx = ToolContext {
        workdir: std::env::temp_dir(),
        settings: Default::default(),
        cancel: Default::default(),
        call: "c1".into(),
        progress: None,
        seen: None,
        trace: None,
    };
    let saved = json!({"path": "hi.py", "bytes_written": 26, "action": "created"});
    let done = CreateCode.resume(then.clone(), vec![Ok(saved)], &ctx).await;
    assert_eq!(
        done,
        Ok(ToolReply::Done(
            json!({"path": "hi.py", "language": "python", "lines": 2})
        ))
    );
    let failed = CreateCode
        .resume(then, vec![Err("the call was denied".into())], &ctx)
        .await;
    assert!(matches!(failed, Err(ToolError::Failed(t)) if t.contains("denied")));
}

#[tokio::test]
async fn no_answer_fails_the_call() {
    let reply = run_with(Err("the provider is down".into())).await;
    assert!(
        matches!(&reply, Err(ToolError::Failed(t)) if t.contains("could not be generated") && t.contains("provider is down")),
        "{reply:?}"
    );
}
