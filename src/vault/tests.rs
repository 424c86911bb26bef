use super::*;

fn vars(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    list.iter()
        .map(|(n, v)| (OsString::from(n), OsString::from(v)))
        .collect()
}

#[test]
fn the_classes_and_the_named_variables_are_withheld_once() {
    let env = vars(&[
        ("PATH", "/bin"),
        ("OPENAI_API_KEY", "sk-1"),
        ("LLM_ACCESS", "not-a-class-name"),
        ("DATABASE_URL", "postgres://u:pw@h/db"),
        ("OPENAI_API_KEY", "sk-second-copy"),
        ("PWD", "/w"),
    ]);
    let taken = to_withhold(env, &["LLM_ACCESS".to_string()]);
    let names: Vec<&OsStr> = taken.iter().map(|(n, _)| n.as_os_str()).collect();
    assert_eq!(names, ["OPENAI_API_KEY", "LLM_ACCESS", "DATABASE_URL"]);
    assert_eq!(taken[0].1, "sk-1", "the first copy is the one getenv gives");
}

#[test]
fn a_name_that_is_not_utf8_is_judged_by_its_lossy_form() {
    use std::os::unix::ffi::OsStringExt;
    let name = OsString::from_vec(b"MY_\xffTOKEN".to_vec());
    let taken = to_withhold([(name.clone(), OsString::from("v"))], &[]);
    assert_eq!(taken, [(name, OsString::from("v"))]);
}

#[test]
fn status_names_what_is_withheld_and_passed_never_a_value() {
    let names = ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "OPENAI_API_KEY"].map(String::from);
    let text = describe_names(
        &names,
        &["GITHUB_TOKEN".to_string(), "OPENAI_API_KEY".to_string()],
        &["OPENAI_API_KEY".to_string()],
    );
    assert_eq!(
        text,
        "withheld from tools, kept in taco's memory only: AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, \
         OPENAI_API_KEY; passed to tools all the same ([tools.shell] env_passthrough): GITHUB_TOKEN"
    );
    assert!(describe_names(&[], &[], &[]).starts_with("no secret variables"));
}
