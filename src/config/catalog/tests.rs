use std::collections::HashMap;

use super::*;

fn file(text: &str) -> ConfigFile {
    super::super::parse_config(std::path::Path::new("t.toml"), text).unwrap()
}

/// An environment of these variables only.
fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let vars: HashMap<String, String> = (vars.iter())
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name: &str| vars.get(name).cloned()
}

const TWO_LOCAL: &str = r#"
[providers.first]
kind = "openai"
base_url = "http://127.0.0.1:1/v1"
model = "m1"
models = ["m1", "m1-large"]

[providers.second]
kind = "ollama"
base_url = "http://127.0.0.1:2"
model = "qwen3:8b"
"#;

fn catalog(text: &str, vars: &[(&str, &str)], running: &str) -> Catalog {
    let file = file(text);
    let env = env(vars);
    let running = choose(running, &file, &env).unwrap();
    Catalog::new(&running, &file, &env, 0.85)
}

fn names(catalog: &Catalog) -> Vec<String> {
    catalog.catalog().into_iter().map(|p| p.name).collect()
}

#[test]
fn the_running_provider_comes_first_then_tables_then_presets_that_can_work() {
    let c = catalog(TWO_LOCAL, &[("GROQ_API_KEY", "gsk-x")], "second");
    // openai and anthropic need keys that are not set; groq's is; ollama and demo need none.
    assert_eq!(names(&c), ["second", "first", "groq", "ollama", "demo"]);
    let first = &c.catalog()[1];
    assert_eq!(first.model, "m1");
    assert_eq!(first.models, ["m1", "m1-large"], "the default once, first");
    assert!(first.lists);
    let demo = c.catalog().into_iter().find(|p| p.name == "demo").unwrap();
    assert!(!demo.lists, "the demo has no server to ask");
}

#[test]
fn a_table_overriding_a_preset_is_listed_once() {
    let text = "[providers.openai]\nbase_url = \"http://127.0.0.1:3/v1\"\nmodel = \"local\"\n";
    let c = catalog(text, &[("OPENAI_API_KEY", "sk-x")], "demo");
    let names = names(&c);
    assert_eq!(
        names.iter().filter(|n| *n == "openai").count(),
        1,
        "{names:?}"
    );
}

#[test]
fn switching_builds_the_provider_with_the_model_and_its_window() {
    let c = catalog(TWO_LOCAL, &[("OPENAI_API_KEY", "sk-x")], "first");
    let switched = c.switch("openai", Some("gpt-4.1-mini")).unwrap();
    assert_eq!(switched.provider.name(), "openai");
    assert_eq!(switched.provider.model(), "gpt-4.1-mini");
    assert_eq!(
        switched.context.window,
        Some(1_047_576),
        "the new model's window"
    );
    assert!((switched.context.compact_at - 0.85).abs() < 1e-9);
    let default = c.switch("second", None).unwrap();
    assert_eq!(
        default.provider.model(),
        "qwen3:8b",
        "no model: the provider's default"
    );
    assert_eq!(
        default.context.window, None,
        "Ollama's is asked of the server"
    );
}

#[test]
fn an_unknown_provider_or_a_missing_key_is_said_plainly() {
    let c = catalog(TWO_LOCAL, &[], "first");
    let err = c.switch("nope", None).err().unwrap();
    assert!(err.contains("unknown provider 'nope'"), "{err}");
    assert!(err.contains("first, second"), "{err}");
    assert!(!err.contains('`'), "plain text: {err}");
    let text = "[providers.hosted]\nkind = \"openai\"\nbase_url = \"https://api.openai.com/v1\"\napi_key_env = \"HOSTED_KEY\"\nmodel = \"gpt-4.1\"\n";
    let c = catalog(text, &[], "demo");
    let err = c.switch("hosted", None).err().unwrap();
    assert!(err.contains("needs an API key: set HOSTED_KEY"), "{err}");
}

#[tokio::test]
async fn a_provider_whose_key_is_not_set_is_not_asked() {
    let text = "[providers.keyed]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"KEYED_KEY\"\nmodel = \"m\"\n";
    let c = catalog(text, &[], "keyed");
    let (name, listing) = c.listings().into_iter().next().unwrap();
    assert_eq!(name, "keyed");
    assert_eq!(listing.await.unwrap_err(), "KEYED_KEY is not set");
}

#[test]
fn debug_output_never_shows_a_key() {
    let c = catalog(TWO_LOCAL, &[("OPENAI_API_KEY", "sk-very-secret")], "first");
    assert!(!format!("{c:?}").contains("sk-very-secret"));
}
