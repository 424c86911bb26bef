//! What the diagnostic log says of a run: what happened, never content, arguments or results.

use crate::event::EventData;

/// The diagnostic log gets what happened, never content, arguments or results.
pub(super) fn log(request_id: &str, data: &EventData) {
    match data {
        EventData::RunStarted {
            provider, model, ..
        } => {
            tracing::info!(request_id, provider, model, "run started");
        }
        EventData::LlmCall(call) => tracing::info!(
            request_id,
            turn = call.turn,
            duration_ms = call.duration_ms,
            ttft_ms = call.ttft_ms,
            input_tokens = call.usage.input_tokens,
            output_tokens = call.usage.output_tokens,
            tool_calls = call.tool_calls.len(),
            purpose = ?call.purpose(),
            "llm call"
        ),
        // A nested call's failure (an answer check, a tool's request) ends no run: the log
        // still says it.
        EventData::LlmFailed(failed) => tracing::warn!(
            request_id,
            call = failed.call,
            end = ?failed.end,
            error = failed.error.as_deref(),
            "llm call ended without an answer"
        ),
        EventData::ToolResult {
            name,
            ok,
            duration_ms,
            ..
        } => {
            tracing::info!(request_id, tool = name, ok, duration_ms, "tool call");
        }
        EventData::ApprovalDecided {
            name,
            decision,
            scope,
            ..
        } => {
            tracing::info!(request_id, tool = name, ?decision, ?scope, "approval");
        }
        EventData::Error { kind, message } => {
            tracing::warn!(request_id, kind, message, "run error")
        }
        EventData::Cancelled { running } => tracing::info!(request_id, running, "cancelled"),
        EventData::Final { turns, .. } => tracing::info!(request_id, turns, "run finished"),
        _ => {}
    }
}
