//! Session lines for the session module's tests, as the writer writes them.

/// A header line.
pub const HEADER: &str = r#"{"type":"session","version":2,"id":"20261101-100000-aaaaaa","provider":"demo","model":"m","workdir":"/w","started":1000}"#;

/// One run's lines: its prompt as the user message, one model call of `tokens` in and out
/// (written compacted, as the writer does), the answer as a message, and `final`.
pub fn run(n: u32, prompt: &str, tokens: u32) -> String {
    let rid = format!("r{n}");
    format!(
        concat!(
            r#"{{"timestamp":{t},"request_id":"{rid}","type":"run_started","data":{{"prompt":"{p}","provider":"demo","model":"m","max_turns":10}}}}"#,
            "\n",
            r#"{{"type":"message","timestamp":{t},"data":{{"content":"{p}","role":"user"}}}}"#,
            "\n",
            r#"{{"timestamp":{t},"request_id":"{rid}","type":"llm_call","data":{{"content":"ok","duration_ms":1,"finish_reason":"stop","message_count":2,"model":"m","new_messages_from":"message_lines","tool_calls":[],"tools":[],"turn":1,"usage":{{"input_tokens":{k},"output_tokens":{k}}}}}}}"#,
            "\n",
            r#"{{"type":"message","timestamp":{t},"data":{{"content":"answer {n}","role":"assistant"}}}}"#,
            "\n",
            r#"{{"timestamp":{t},"request_id":"{rid}","type":"final","data":{{"content":"answer {n}","turns":1,"usage":{{"input_tokens":{k},"output_tokens":{k}}}}}}}"#,
            "\n"
        ),
        t = 1000 + n,
        n = n,
        rid = rid,
        p = prompt,
        k = tokens
    )
}
