//! The cost budget (issue 31): with `--max-cost`, every model call is preceded by a check —
//! the request's input estimated (its messages and its tools' definitions) and the session's
//! spending priced. It must cost nothing next to the call: a long conversation (1,000
//! messages, ~1 MB) with 100 tools (MCP servers) and spending on 5 models.
//!
//!   cargo bench --bench cost_budget
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed run

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use taco::config::pricing::{Price, Pricing};
use taco::conversation::{Message, ToolCall, ToolSpec, Usage};
use taco::event::Purpose;
use taco::orchestrator::budget::{CostBudget, NextCall, Spent, input_tokens};

fn conversation(n: usize) -> Vec<Message> {
    let mut messages = vec![Message::system("You are taco. ".repeat(200))];
    for i in 0..n / 2 {
        let call = ToolCall {
            id: format!("c{i}"),
            name: "read_file".into(),
            arguments: json!({"path": format!("src/file_{i}.rs")}),
        };
        messages.push(Message::assistant(
            Some("Let me look.".into()),
            None,
            vec![call],
        ));
        messages.push(Message::tool(
            format!("c{i}"),
            "read_file",
            "x".repeat(2_000),
        ));
    }
    messages
}

fn tools(n: usize) -> Vec<ToolSpec> {
    (0..n)
        .map(|i| ToolSpec {
            name: format!("mcp__server__tool_{i}"),
            description: "Does one thing to a file of the workspace. ".repeat(4),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "The file."},
                "mode": {"type": "string", "enum": ["a", "b", "c"]},
            }, "required": ["path"]}),
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut prices = BTreeMap::new();
    prices.insert(
        "m".to_string(),
        Price {
            input: 2.0,
            output: 8.0,
            cached: None,
        },
    );
    let budget = CostBudget {
        max_cost: 100.0,
        pricing: Pricing::new(prices),
    };
    let mut spent = Spent::default();
    for model in ["m", "gpt-4.1", "gpt-4o-mini", "claude-sonnet-4", "llama3.2"] {
        spent.add(
            model,
            Usage {
                input_tokens: 1_000_000,
                output_tokens: 100_000,
                cached_tokens: 0,
            },
        );
    }
    let messages = conversation(1_000);
    let specs = tools(100);
    c.bench_function("check before a call: 1,000 messages, 100 tools", |b| {
        b.iter(|| {
            let next = NextCall {
                model: "m",
                input_tokens: input_tokens(black_box(&messages), black_box(&specs)),
                purpose: Purpose::Conversation,
                parent: None,
            };
            black_box(budget.check(&spent, next))
        })
    });
    let short = conversation(20);
    let builtins = tools(15);
    c.bench_function("check before a call: 20 messages, 15 tools", |b| {
        b.iter(|| {
            let next = NextCall {
                model: "m",
                input_tokens: input_tokens(black_box(&short), black_box(&builtins)),
                purpose: Purpose::Conversation,
                parent: None,
            };
            black_box(budget.check(&spent, next))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
