//! A tool call's arguments are stored once per call in the session file (issue 9.6), and
//! loading gives every line back whole.

use crate::support;

use support::cli::*;
use taco::event::EventData;
use taco::session::Entry;

#[tokio::test]
async fn the_demo_write_is_stored_once_and_loads_whole() {
    let (home, work) = setup();
    let mut cmd = taco(home.path(), work.path());
    cmd.args(["exec", "-p", "demo", "--approve", "all", "hi"]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let path = only_session(home.path());
    let text = std::fs::read_to_string(&path).unwrap();
    // A sentence deep in write_file's `content` argument (beyond the stack frames' short
    // summaries) is in the file once.
    assert_eq!(
        text.matches("written by the offline demo provider").count(),
        1,
        "stored more than once:\n{text}"
    );

    let loaded = taco::session::load(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let mut from_model = None;
    let mut copies = Vec::new();
    for entry in &loaded.entries {
        match entry {
            Entry::Event(event) => match &event.data {
                EventData::LlmCall(call) => {
                    for c in &call.tool_calls {
                        if c.name == "write_file" {
                            from_model = Some(c.arguments.clone());
                        }
                    }
                    for m in &call.new_messages {
                        copies.extend(
                            m.tool_calls
                                .iter()
                                .filter(|c| c.name == "write_file")
                                .map(|c| c.arguments.clone()),
                        );
                    }
                }
                EventData::ToolCall {
                    name, arguments, ..
                }
                | EventData::ApprovalRequested {
                    name, arguments, ..
                } if name == "write_file" => copies.push(arguments.clone()),
                _ => {}
            },
            Entry::Message(m) => {
                copies.extend(
                    m.tool_calls
                        .iter()
                        .filter(|c| c.name == "write_file")
                        .map(|c| c.arguments.clone()),
                );
            }
        }
    }
    let from_model = from_model.expect("the llm_call carries the write");
    assert!(
        from_model["content"]
            .as_str()
            .unwrap()
            .contains("Note from the taco demo")
    );
    // tool_call, approval_requested, the assistant message and the next call's new messages.
    assert_eq!(copies.len(), 4, "{copies:?}");
    assert!(copies.iter().all(|c| *c == from_model));

    // The compacted file resumes like any other.
    let mut cmd = taco(home.path(), work.path());
    cmd.args([
        "exec",
        "-p",
        "demo",
        "--approve",
        "all",
        "again",
        "--resume",
    ]);
    let run = finish(&mut cmd).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
}
