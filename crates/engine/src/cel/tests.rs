use super::*;
use crate::settings::CelExpression;
use serde_json::json;

/// `cel` compiled, which it must.
/// Compiled from settings the test leaks: a compiled rule borrows its
/// texts from the settings.
fn compiled(cel: Cel) -> CompiledCel<'static> {
    let cel: &'static Cel = Box::leak(Box::new(cel));
    let mut diags = Diagnostics::default();
    let compiled = CompiledCel::compile(cel, "cel", &mut diags);
    assert!(diags.is_empty(), "{}", diags.summary());
    compiled.unwrap()
}

/// A CREATE of `object` in `namespace`, with no parameters.
fn create<'a>(object: &'a Value, request: &'a Value, namespace: &'a str) -> Inputs<'a> {
    Inputs {
        object,
        old_object: &Value::Null,
        request,
        namespace,
        namespace_object: None,
        params: None,
    }
}

fn compile(
    expressions: &[(&str, Option<&str>)],
    variables: &[(&str, &str)],
) -> CompiledCel<'static> {
    let cel = Cel {
        expressions: expressions
            .iter()
            .map(|(e, m)| CelExpression {
                expression: e.to_string(),
                message: m.map(str::to_string),
                message_expression: None,
                reason: None,
            })
            .collect(),
        variables: variables
            .iter()
            .map(|(n, e)| NamedExpression {
                name: n.to_string(),
                expression: e.to_string(),
            })
            .collect(),
        ..Cel::default()
    };
    compiled(cel)
}

fn run(c: &CompiledCel, object: Value) -> (RuleStatus, String) {
    let request = json!({"operation": "CREATE"});
    c.evaluate(&create(&object, &request, "team-a"))
}

#[test]
fn expressions_decide_as_kubernetes_cel_does() {
    let pod = json!({"metadata": {"name": "web-1", "labels": {"app": "web"}}, "spec": {"replicas": 3, "containers": [{"name": "a", "image": "nginx:1.2"}, {"name": "b", "image": "ghcr.io/x:latest"}]}});
    let cases: Vec<(&str, &str, RuleStatus)> = vec![
        (
            "integer_arithmetic",
            "object.spec.replicas + 1 == 4",
            RuleStatus::Pass,
        ),
        (
            "has_macro",
            "has(object.metadata.labels.app)",
            RuleStatus::Pass,
        ),
        (
            "all_macro",
            "object.spec.containers.all(c, c.image.contains(':'))",
            RuleStatus::Pass,
        ),
        (
            "exists_fails",
            "object.spec.containers.exists(c, c.image.endsWith(':latest')) == false",
            RuleStatus::Fail,
        ),
        (
            "matches_regex",
            "object.metadata.name.matches('^web-[0-9]+$')",
            RuleStatus::Pass,
        ),
        (
            "find",
            "object.metadata.name.find('[0-9]+') == '1'",
            RuleStatus::Pass,
        ),
        (
            "strings_extension",
            "object.metadata.name.upperAscii() == 'WEB-1'",
            RuleStatus::Pass,
        ),
        (
            "split_and_size",
            "size(object.metadata.name.split('-')) == 2",
            RuleStatus::Pass,
        ),
        (
            "in_operator",
            "'app' in object.metadata.labels",
            RuleStatus::Pass,
        ),
        (
            "missing_key_error_fails_the_rule",
            "object.spec.missing == 1",
            RuleStatus::Fail,
        ),
        (
            "non_bool_result_fails_the_rule",
            "object.spec.replicas",
            RuleStatus::Fail,
        ),
    ];
    for (name, expression, want) in cases {
        let c = compile(&[(expression, None)], &[]);
        assert_eq!(run(&c, pod.clone()).0, want, "{name}: {expression}");
    }
}

#[test]
fn messages_and_variables() {
    let pod = json!({"spec": {"containers": [{"image": "nginx:latest"}]}});
    let c = compile(
        &[("!variables.latest", Some("no latest tags"))],
        &[(
            "latest",
            "object.spec.containers.exists(c, c.image.endsWith(':latest'))",
        )],
    );
    assert_eq!(
        run(&c, pod.clone()),
        (RuleStatus::Fail, "no latest tags".into())
    );
    let c = compile(&[("false", None)], &[]);
    assert_eq!(
        run(&c, pod),
        (RuleStatus::Fail, "failed expression: false".into())
    );
}

#[test]
fn compile_errors_are_settings_problems() {
    let cel = Cel {
        expressions: vec![CelExpression {
            expression: "object.spec.(".into(),
            message: None,
            message_expression: None,
            reason: None,
        }],
        ..Cel::default()
    };
    let mut diags = Diagnostics::default();
    assert!(CompiledCel::compile(&cel, "cel", &mut diags).is_none());
    let got: Vec<String> = diags
        .into_errors()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with("cel.expressions[0].expression: `object.spec.(` does not compile"));
}

fn with_annotations(annotations: &[(&str, &str)]) -> CompiledCel<'static> {
    let cel = Cel {
        expressions: vec![CelExpression {
            expression: "object.metadata.name != 'blocked'".into(),
            message: None,
            message_expression: None,
            reason: None,
        }],
        audit_annotations: annotations
            .iter()
            .map(|(k, v)| crate::settings::AuditAnnotation {
                key: k.to_string(),
                value_expression: v.to_string(),
            })
            .collect(),
        ..Cel::default()
    };
    compiled(cel)
}

fn outcome(c: &CompiledCel, name: &str) -> CelOutcome {
    let object = json!({"metadata": {"name": name}});
    let request = json!({"operation": "CREATE"});
    c.evaluate_with_code(&create(&object, &request, ""))
}

#[test]
fn audit_annotations_are_evaluated_whatever_the_verdict() {
    let named = with_annotations(&[
        ("checked", "'checked-' + object.metadata.name"),
        ("omitted-when-null", "null"),
        ("omitted-when-empty", "''"),
    ]);
    let want = vec![("checked".to_string(), "checked-web".to_string())];
    let passed = outcome(&named, "web");
    assert_eq!(passed.status, RuleStatus::Pass);
    assert_eq!(passed.audit_annotations, want);
    let failed = outcome(&named, "blocked");
    assert_eq!(failed.status, RuleStatus::Fail);
    assert_eq!(
        failed.audit_annotations,
        vec![("checked".to_string(), "checked-blocked".to_string())]
    );
    // Kyverno reads only the validations' decisions: an annotation whose
    // value cannot be computed, or is no string, is left out and denies
    // nothing.
    for (name, expression) in [("errors", "object.metadata.missing"), ("not_a_string", "1")] {
        let broken = outcome(&with_annotations(&[("n", expression)]), "web");
        assert_eq!(broken.status, RuleStatus::Pass, "{name}");
        assert!(broken.audit_annotations.is_empty(), "{name}");
    }
}

#[test]
fn expressions_without_a_message_take_the_rules_message() {
    let c = compile(&[("false", None), ("true", Some("own"))], &[])
        .with_default_message(Some("from the rule"));
    assert_eq!(
        run(&c, json!({})),
        (RuleStatus::Fail, "from the rule".to_string())
    );
    let own = compile(&[("false", Some("own"))], &[]).with_default_message(Some("from the rule"));
    assert_eq!(run(&own, json!({})), (RuleStatus::Fail, "own".to_string()));
}

/// (case, message, messageExpression, reason, expected message, code)
type MessageCase<'a> = (
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    String,
    Option<u16>,
);

#[test]
fn failure_messages_follow_the_kubernetes_validator() {
    // (case, message, messageExpression, reason, expected message, code)
    let long = format!("'{}'", "x".repeat(6000));
    let cases: Vec<MessageCase> = vec![
        (
            "expression_result_trimmed",
            Some("static"),
            Some("'  hi  '"),
            None,
            "hi".into(),
            None,
        ),
        (
            "multi_line_result_falls_back",
            Some("static"),
            Some("'a\\nb'"),
            None,
            "static".into(),
            None,
        ),
        (
            "long_result_falls_back",
            Some("static"),
            Some(long.as_str()),
            None,
            "static".into(),
            None,
        ),
        (
            "blank_result_falls_back",
            Some(" static \n"),
            Some("' '"),
            None,
            "static".into(),
            None,
        ),
        (
            "no_message_names_the_expression",
            None,
            None,
            None,
            "failed expression: object.metadata.name != 'blocked'".into(),
            None,
        ),
        (
            "known_reason_answers_its_status",
            None,
            None,
            Some("Forbidden"),
            "failed expression: object.metadata.name != 'blocked'".into(),
            Some(403),
        ),
        (
            "other_reason_is_accepted",
            Some("m"),
            None,
            Some("Conflict"),
            "m".into(),
            None,
        ),
    ];
    for (name, message, expression, reason, want, code) in cases {
        let cel = Cel {
            expressions: vec![CelExpression {
                expression: " object.metadata.name != 'blocked'\n".into(),
                message: message.map(str::to_string),
                message_expression: expression.map(str::to_string),
                reason: reason.map(str::to_string),
            }],
            ..Cel::default()
        };
        let result = outcome(&compiled(cel), "blocked");
        assert_eq!(result.status, RuleStatus::Fail, "{name}");
        assert_eq!(result.message, want, "{name}");
        assert_eq!(result.code, code, "{name}");
    }
}

/// (case, preconditions, expected result)
type PreconditionCase = (&'static str, Vec<&'static str>, Result<bool, &'static str>);

#[test]
fn preconditions_decide_as_kubernetes_match_conditions() {
    let cases: Vec<PreconditionCase> = vec![
        ("all_hold", vec!["true", "object.metadata.name == 'web'"], Ok(true)),
        ("error_then_false", vec!["object.spec.missing == 1", "false"], Ok(false)),
        ("false_then_error", vec!["false", "object.spec.missing == 1"], Ok(false)),
        ("error_alone", vec!["true", "object.spec.missing == 1"],
            Err("expression 'object.spec.missing == 1' resulted in error: no such key: spec")),
        ("errors_are_listed_once_each", vec!["object.spec.a", "object.spec.a", "object.kind.b"],
            Err("[expression 'object.spec.a' resulted in error: no such key: spec, expression 'object.kind.b' resulted in error: no such key: kind]")),
        // Only `false` is false: the matcher lets any other value through.
        ("a_value_that_is_not_a_bool_holds", vec!["object.metadata.name"], Ok(true)),
        // The rule's `validate.cel.variables` are in scope.
        ("reads_a_variable", vec!["variables.isWeb"], Ok(true)),
        ("reads_a_false_variable", vec!["!variables.isWeb"], Ok(false)),
    ];
    let variables = vec![(
        "isWeb".to_string(),
        kube_cel::compile("object.metadata.name == 'web'").unwrap(),
    )];
    for (name, conditions, want) in cases {
        let list: Vec<NamedExpression> = conditions
            .iter()
            .enumerate()
            .map(|(i, e)| NamedExpression {
                name: format!("c{i}"),
                expression: e.to_string(),
            })
            .collect();
        let mut diags = Diagnostics::default();
        let pre = Preconditions::compile(&list, "celPreconditions", &mut diags).unwrap();
        let object = json!({"metadata": {"name": "web"}});
        let request = json!({"operation": "CREATE"});
        let got = pre.evaluate(&create(&object, &request, ""), &variables);
        assert_eq!(got, want.map_err(str::to_string), "{name}");
    }
}
