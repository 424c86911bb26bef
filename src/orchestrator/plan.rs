//! Planning a call before anything runs (DESIGN §4 rules 4–6): is the tool offered, are its
//! arguments valid, are required parameters missing that someone could supply, and what does
//! the policy (with the grants given so far) say. A pure function of its inputs: no events,
//! no waiting, no clock; the batch executes what it decides.

use serde_json::Value;

use super::approval::Policies;
use super::scope::Pending;
use crate::tools::outcome::Ended;
use crate::tools::{Policy, ToolRegistry, ToolSettings};

/// What the plan says about one call.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Planned {
    /// It ends here without running (an unknown tool, invalid arguments).
    Ends(Ended),
    /// These required parameters are missing; ask the user, then plan again.
    Collect(Vec<String>),
    /// A valid call, under this policy (an `ask` the user granted is already `allow`).
    Policy(Policy),
}

/// What planning looks at.
pub(super) struct Planner<'a> {
    /// The tools that exist.
    pub registry: &'a ToolRegistry,
    /// The tools offered to this conversation (`None`: every tool, for calls a tool needs).
    pub offered: Option<&'a [String]>,
    /// Config policies and the grants given so far.
    pub policies: &'a Policies,
    /// Tool settings (some default policies depend on them).
    pub settings: &'a ToolSettings,
}

impl Planner<'_> {
    /// Plans `call` with `arguments`. `failures` counts the earlier invalid-argument results
    /// of this tool in the run (the first gets the schema as guidance, later ones do not);
    /// `may_collect` says whether someone can be asked for missing parameters.
    pub(super) fn plan(
        &self,
        call: &Pending,
        arguments: &Value,
        failures: u32,
        may_collect: bool,
    ) -> Planned {
        let known = self.offered.is_none_or(|o| o.contains(&call.name));
        let Some(tool) = self.registry.get(&call.name).filter(|_| known) else {
            return Planned::Ends(Ended::Unknown(self.unknown(&call.name)));
        };
        let problem = match tool.validate(arguments) {
            Ok(()) => {
                let policy = self
                    .policies
                    .policy_for(tool.as_ref(), arguments, self.settings);
                return Planned::Policy(policy);
            }
            Err(problem) => problem,
        };
        // Missing required parameters are asked of the user where someone can answer (rule
        // 4); headless, the validation error names them.
        if may_collect
            && matches!(arguments, Value::Object(_) | Value::Null)
            && problem.contains("missing field")
        {
            let missing = missing_required(&tool.parameters(), arguments);
            if !missing.is_empty() {
                return Planned::Collect(missing);
            }
        }
        let name = &call.name;
        Planned::Ends(Ended::Invalid(if !call.from_model {
            format!("invalid arguments for {name}: {problem}")
        } else if failures == 0 {
            format!(
                "invalid arguments for {name}: {problem}. The arguments must match this JSON Schema: {}. Correct them and call {name} again.",
                tool.parameters()
            )
        } else {
            format!(
                "invalid arguments for {name} again: {problem}. This call failed; do not retry it the same way."
            )
        }))
    }

    fn unknown(&self, name: &str) -> String {
        let names: Vec<String> = match self.offered {
            Some(offered) => offered.to_vec(),
            None => self
                .registry
                .all()
                .iter()
                .map(|t| t.name().to_string())
                .collect(),
        };
        if names.is_empty() {
            format!("unknown tool '{name}': no tools are available")
        } else {
            format!(
                "unknown tool '{name}'. Available tools: {}",
                names.join(", ")
            )
        }
    }
}

/// Required parameters that `arguments` lacks (absent or null), in schema order.
pub(super) fn missing_required(schema: &Value, arguments: &Value) -> Vec<String> {
    let given = arguments.as_object();
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|name| given.and_then(|g| g.get(*name)).is_none_or(Value::is_null))
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Scope;
    use serde_json::json;
    use std::collections::HashMap;

    fn call(name: &str, from_model: bool) -> Pending {
        Pending {
            frame: "f".into(),
            call_id: "f".into(),
            name: name.into(),
            arguments: Value::Null,
            parent: None,
            from_model,
        }
    }

    struct Fixture {
        registry: ToolRegistry,
        policies: Policies,
        settings: ToolSettings,
        offered: Vec<String>,
    }

    impl Fixture {
        fn new() -> Self {
            Self {
                registry: ToolRegistry::builtins(),
                policies: Policies::default(),
                settings: ToolSettings::default(),
                offered: vec!["read_file".into(), "write_file".into()],
            }
        }

        fn planner(&self) -> Planner<'_> {
            Planner {
                registry: &self.registry,
                offered: Some(&self.offered),
                policies: &self.policies,
                settings: &self.settings,
            }
        }
    }

    fn write(path: &str) -> Value {
        json!({"path": path, "content": "x"})
    }

    #[test]
    fn a_tool_not_offered_is_unknown_and_the_error_lists_what_is() {
        let f = Fixture::new();
        let Planned::Ends(Ended::Unknown(text)) =
            f.planner().plan(&call("shell", true), &json!({}), 0, true)
        else {
            panic!("shell is not offered here");
        };
        assert!(
            text.contains("'shell'") && text.contains("read_file, write_file"),
            "{text}"
        );
        let Planned::Ends(Ended::Unknown(text)) =
            f.planner().plan(&call("nope", true), &json!({}), 0, true)
        else {
            panic!("nope is no tool");
        };
        assert!(text.contains("'nope'"), "{text}");
    }

    #[test]
    fn missing_parameters_are_collected_only_where_someone_can_answer() {
        let f = Fixture::new();
        let partial = json!({"content": "x"});
        assert_eq!(
            f.planner()
                .plan(&call("write_file", true), &partial, 0, true),
            Planned::Collect(vec!["path".into()])
        );
        let Planned::Ends(Ended::Invalid(text)) =
            f.planner()
                .plan(&call("write_file", true), &partial, 0, false)
        else {
            panic!("headless, a missing parameter is invalid");
        };
        assert!(
            text.contains("`path`") && text.contains("JSON Schema"),
            "{text}"
        );
    }

    #[test]
    fn the_model_gets_the_schema_once_then_a_short_refusal() {
        let f = Fixture::new();
        let bad = json!({"path": 5, "content": "x"});
        let first = f.planner().plan(&call("write_file", true), &bad, 0, true);
        let again = f.planner().plan(&call("write_file", true), &bad, 1, true);
        let from_a_tool = f.planner().plan(&call("write_file", false), &bad, 0, true);
        let text = |p: Planned| match p {
            Planned::Ends(Ended::Invalid(t)) => t,
            other => panic!("{other:?}"),
        };
        let (first, again, from_a_tool) = (text(first), text(again), text(from_a_tool));
        assert!(first.contains("JSON Schema") && first.contains("call write_file again"));
        assert!(
            again.contains("again") && !again.contains("JSON Schema"),
            "{again}"
        );
        assert!(!from_a_tool.contains("JSON Schema"), "{from_a_tool}");
    }

    #[test]
    fn policies_and_grants_decide_valid_calls() {
        let mut f = Fixture::new();
        let read = json!({"path": "a.txt"});
        assert_eq!(
            f.planner().plan(&call("read_file", true), &read, 0, true),
            Planned::Policy(Policy::Allow)
        );
        assert_eq!(
            f.planner()
                .plan(&call("write_file", true), &write("a"), 0, true),
            Planned::Policy(Policy::Ask)
        );
        f.policies.grant("write_file", Scope::Turn);
        assert_eq!(
            f.planner()
                .plan(&call("write_file", true), &write("a"), 0, true),
            Planned::Policy(Policy::Allow),
            "a grant turns ask into allow"
        );
        f.policies = Policies::new(HashMap::from([("write_file".to_string(), Policy::Deny)]));
        f.policies.grant("write_file", Scope::Session);
        assert_eq!(
            f.planner()
                .plan(&call("write_file", true), &write("a"), 0, true),
            Planned::Policy(Policy::Deny),
            "no grant overrides a configured deny"
        );
    }

    #[test]
    fn calls_a_tool_needs_may_use_any_tool() {
        let f = Fixture::new();
        let planner = Planner {
            offered: None,
            ..f.planner()
        };
        let shell = json!({"command": "true"});
        assert!(matches!(
            planner.plan(&call("shell", false), &shell, 0, false),
            Planned::Policy(_)
        ));
    }

    #[test]
    fn finds_missing_required_parameters() {
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}, "n": {"type": "integer"}}, "required": ["path", "n"]});
        assert_eq!(missing_required(&schema, &json!({"n": 1})), ["path"]);
        assert_eq!(
            missing_required(&schema, &json!({"path": null})),
            ["path", "n"]
        );
        assert!(missing_required(&schema, &json!({"path": "a", "n": 2})).is_empty());
        assert_eq!(
            missing_required(&schema, &json!("not an object")),
            ["path", "n"]
        );
    }
}
