use super::*;
use serde_json::json;

fn schema() -> Value {
    json!({"type": "object", "properties": {
        "path": {"type": "string", "description": "File to save the code to, relative to the workspace root."},
        "language": {"type": "string", "description": "The programming language (python, rust, javascript, …)."},
        "description": {"type": "string", "description": "What the code should do."},
        "count": {"type": "integer"},
        "mode": {"type": "string", "enum": ["fast", "careful"]},
    }})
}

fn judged(reply: &str, name: &str) -> Judged {
    let schema = schema();
    judge(reply, &Asked::of(&schema, name))
}

#[test]
fn plain_values_are_answers() {
    assert_eq!(judged("hello.py", "path"), Judged::Answer);
    assert_eq!(judged("  python ", "language"), Judged::Answer);
    assert_eq!(judged("12", "count"), Judged::Answer);
    assert_eq!(judged("Careful", "mode"), Judged::Answer);
    // An absolute path is a value where a path is asked, not a command.
    assert_eq!(judged("/tmp", "path"), Judged::Answer);
}

#[test]
fn slash_commands_are_new_requests() {
    let by = Judged::NewRequest(SwitchedBy::SlashCommand);
    assert_eq!(judged("/help", "language"), by);
    assert_eq!(judged("/model gpt-4o", "path"), by);
    assert_eq!(judged("/usr/bin", "language"), Judged::Answer);
}

#[test]
fn questions_that_share_nothing_with_what_is_asked_are_new_requests() {
    let by = Judged::NewRequest(SwitchedBy::UnrelatedQuestion);
    assert_eq!(judged("what's the weather in Paris?", "path"), by);
    assert_eq!(judged("can you explain monads?", "language"), by);
    // It mentions what is asked: maybe an answer, the model decides.
    assert_eq!(judged("which file should it be?", "path"), Judged::Unsure);
    assert_eq!(judged("python or rust?", "language"), Judged::Unsure);
    assert_eq!(judged("maybe 3?", "count"), Judged::Unsure);
}

#[test]
fn much_longer_replies_are_new_requests_except_for_free_text() {
    let long = "forget about that for now and instead look through the whole repository for every place where we open a database connection without closing it, then list them for me with their line numbers and a suggested fix for each one of them, and after that run the whole test suite again";
    assert!(long.len() > 4 * 64);
    assert_eq!(
        judged(long, "path"),
        Judged::NewRequest(SwitchedBy::MuchLonger)
    );
    // Free text is words: an answer, unless it asks about what is asked.
    assert_eq!(judged(long, "description"), Judged::Answer);
    assert_eq!(
        judged("it should print the numbers from one to ten", "description"),
        Judged::Answer
    );
    assert_eq!(
        judged("what should the code do?", "description"),
        Judged::Unsure
    );
}

#[test]
fn a_few_words_are_unsure() {
    assert_eq!(judged("tell me a joke", "path"), Judged::Unsure);
    assert_eq!(judged("hello world.py", "path"), Judged::Unsure);
}

#[test]
fn only_a_clear_no_is_a_new_request() {
    assert_eq!(Verdict::read("no"), Verdict::NewRequest);
    assert_eq!(Verdict::read(" No."), Verdict::NewRequest);
    assert_eq!(Verdict::read("**no**, it is not"), Verdict::NewRequest);
    assert_eq!(Verdict::read("yes"), Verdict::Answer);
    assert_eq!(Verdict::read("nope"), Verdict::Answer);
    assert_eq!(Verdict::read(""), Verdict::Answer);
    assert_eq!(Verdict::read("I think not"), Verdict::Answer);
}
