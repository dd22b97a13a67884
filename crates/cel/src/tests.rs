//! Evaluator behaviour through the public API: selection, macros, logic,
//! variables, budgets and limits.

use serde_json::json;

use crate::test_support::{eval_str, eval_with};
use crate::*;

fn pod() -> serde_json::Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-1", "labels": {"app": "web", "tier": ""}},
        "spec": {
            "replicas": 3,
            "ratio": 0.5,
            "nothing": null,
            "containers": [
                {"name": "a", "image": "nginx:1.2", "ports": [{"containerPort": 80}]},
                {"name": "b", "image": "ghcr.io/x:latest"}
            ]
        }
    })
}

#[test]
fn selection_and_indexing() {
    let obj = pod();
    let cases = [
        ("field", "object.metadata.name", "web-1"),
        ("json_int", "object.spec.replicas + 1", "4"),
        ("json_double", "object.spec.ratio * 2.0", "1"),
        ("json_null", "object.spec.nothing == null", "true"),
        (
            "missing_key",
            "object.spec.missing",
            "error: no such key: missing",
        ),
        (
            "select_on_null",
            "object.spec.nothing.x",
            "error: no such key: x",
        ),
        (
            "select_on_string",
            "object.metadata.name.x",
            "error: no such key: x",
        ),
        ("list_index", "object.spec.containers[1].name", "b"),
        ("list_index_uint", "object.spec.containers[1u].name", "b"),
        ("list_index_double", "object.spec.containers[1.0].name", "b"),
        (
            "list_index_fraction",
            "object.spec.containers[0.5]",
            "error: unsupported index value 0.5 in list",
        ),
        (
            "out_of_bounds",
            "object.spec.containers[5]",
            "error: index out of bounds: 5",
        ),
        (
            "negative_index",
            "object.spec.containers[-1]",
            "error: index out of bounds: -1",
        ),
        (
            "string_index_on_list",
            "object.spec.containers['a']",
            "error: unsupported index type 'string' in list",
        ),
        ("map_index", "object.metadata.labels['app']", "web"),
        (
            "map_index_missing",
            "object.metadata.labels['zzz']",
            "error: no such key: zzz",
        ),
        ("map_int_key", "{1: 'one'}[1u]", "one"),
        ("map_double_key", "{1: 'one'}[1.0]", "one"),
        ("in_json_map", "'app' in object.metadata.labels", "true"),
        (
            "in_json_list",
            "'a' in object.spec.containers.map(c, c.name)",
            "true",
        ),
        ("size_of_json", "size(object.spec.containers)", "2"),
        (
            "json_equals_literal",
            "object.spec.containers[0].ports == [{'containerPort': 80}]",
            "true",
        ),
        (
            "json_list_concat",
            "size(object.spec.containers + [1])",
            "3",
        ),
        (
            "undeclared",
            "nope.x",
            "error: undeclared reference to 'nope' (in container '')",
        ),
        (
            "duplicate_map_key",
            "{'a': 1, 'a': 2}",
            "error: duplicate key in map literal: a",
        ),
        (
            "bad_map_key",
            "{1.5: 1}",
            "error: unsupported key type: double",
        ),
    ];
    for (name, expr, want) in cases {
        assert_eq!(eval_with(expr, &obj), want, "{name}");
    }
}

#[test]
fn has_macro() {
    let obj = pod();
    let cases = [
        ("present", "has(object.metadata.labels.app)", "true"),
        (
            "present_empty_string",
            "has(object.metadata.labels.tier)",
            "true",
        ),
        ("absent", "has(object.metadata.annotations)", "false"),
        ("present_null", "has(object.spec.nothing)", "true"),
        ("on_null_is_false", "has(object.spec.nothing.x)", "false"),
        ("on_scalar_is_false", "has(object.metadata.name.x)", "false"),
        (
            "parent_missing_is_error",
            "has(object.metadata.annotations.x)",
            "error: no such key: annotations",
        ),
        ("literal_map", "has({'a': 1}.a)", "true"),
    ];
    for (name, expr, want) in cases {
        assert_eq!(eval_with(expr, &obj), want, "{name}");
    }
}

#[test]
fn logic_is_commutative_over_errors() {
    let cases = [
        ("and_true", "true && true", "true"),
        ("and_short_circuit_left", "false && (1/0 == 1)", "false"),
        (
            "and_error_absorbed_by_right_false",
            "(1/0 == 1) && false",
            "false",
        ),
        (
            "and_error_then_true",
            "(1/0 == 1) && true",
            "error: division by zero",
        ),
        (
            "and_left_error_wins",
            "(1/0 == 1) && ({}.x)",
            "error: division by zero",
        ),
        (
            "and_non_bool",
            "1 && true",
            "error: no matching overload for '_&&_' applied to '(int)'",
        ),
        ("and_non_bool_absorbed", "1 && false", "false"),
        ("or_true_absorbs_error", "(1/0 == 1) || true", "true"),
        ("or_short_circuit", "true || (1/0 == 1)", "true"),
        ("or_error", "false || (1/0 == 1)", "error: division by zero"),
        ("not", "!false", "true"),
        (
            "not_non_bool",
            "!1",
            "error: no matching overload for '!_' applied to '(int)'",
        ),
        ("ternary", "1 < 2 ? 'a' : 'b'", "a"),
        ("ternary_lazy", "true ? 1 : 1/0", "1"),
        (
            "ternary_non_bool",
            "1 ? 2 : 3",
            "error: no matching overload for '_?_:_' applied to '(int)'",
        ),
        ("long_chain", &vec!["true"; 500].join(" && "), "true"),
    ];
    for (name, expr, want) in cases {
        assert_eq!(eval_str(expr), want, "{name}");
    }
}

#[test]
fn comprehension_macros() {
    let obj = pod();
    let cases = [
        ("all", "object.spec.containers.all(c, c.image.contains(':'))", "true"),
        ("exists", "object.spec.containers.exists(c, c.image.endsWith(':latest'))", "true"),
        ("exists_one", "object.spec.containers.exists_one(c, c.name == 'a')", "true"),
        ("exists_one_none", "[1, 2].exists_one(x, x > 5)", "false"),
        ("type_name_as_iteration_variable", "['a', 'b'].exists(type, type == 'b')", "true"),
        ("int_name_as_iteration_variable", "[1, 2].all(int, int > 0) && type(1) == int", "true"),
        ("map", "object.spec.containers.map(c, c.name)", "[\"a\", \"b\"]"),
        ("map_filter", "[1, 2, 3, 4].map(x, x % 2 == 0, x * 10)", "[20, 40]"),
        ("filter", "[1, 2, 3, 4].filter(x, x > 2)", "[3, 4]"),
        ("map_over_map_keys", "object.metadata.labels.map(k, k)", "[\"app\", \"tier\"]"),
        ("all_over_map_keys", "{'a': 1, 'b': 2}.all(k, k.size() == 1)", "true"),
        ("all_error_then_false", "[0, 1].all(x, 1 / x > 5)", "false"),
        ("all_error_only", "[0, 1].all(x, 1 / x >= 1)", "error: division by zero"),
        ("exists_error_then_true", "[0, 1].exists(x, 1 / x == 1)", "true"),
        ("all_non_bool", "[1].all(x, x)", "error: no matching overload for '_&&_' applied to '(int)'"),
        ("filter_non_bool", "[1].filter(x, x)", "error: no matching overload for '_?_:_' applied to '(int)'"),
        ("nested", "[[1, 2], [3]].all(l, l.all(x, x > 0))", "true"),
        ("shadowing", "[1].map(x, [2].map(x, x * 10))", "[[20]]"),
        ("missing_field_inside", "object.spec.containers.all(c, c.ports.size() > 0)", "error: no such key: ports"),
        ("has_inside", "object.spec.containers.filter(c, has(c.ports)).map(c, c.name)", "[\"a\"]"),
        ("not_iterable", "1.all(x, true)", "error: got 'int', expected iterable type"),
        ("two_var_all", "[1, 2, 3].all(i, v, i < v)", "true"),
        ("two_var_exists_map", "{'greeting': 'hello', 'farewell': 'goodbye'}.exists(k, v, k.startsWith('good') || v.endsWith('bye'))", "true"),
        ("exists_one_two_var", "[1, 1, 2, 2, 3, 3].existsOne(i, v, i == 2 && v == 2)", "true"),
        ("transform_list", "[1, 2, 3].transformList(i, v, i * v + v)", "[1, 4, 9]"),
        ("transform_list_filter", "[1, 2, 3].transformList(i, v, i % 2 == 0, i * v + v)", "[1, 9]"),
        ("transform_list_map", "{'a': 1}.transformList(k, v, k + string(v))", "[\"a1\"]"),
        ("transform_map_list", "[1, 2, 3].transformMap(i, v, i * v + v)", "{0: 1, 1: 4, 2: 9}"),
        ("transform_map_map", "{'greeting': 'hello'}.transformMap(k, v, v + '!')", "{\"greeting\": \"hello!\"}"),
        // `transformMapEntry`, from cel-go's ext/comprehensions.go documentation.
        ("transform_map_entry_swap", "{'greeting': 'hello'}.transformMapEntry(k, v, {v: k})", "{\"hello\": \"greeting\"}"),
        ("transform_map_entry_reverse_lookup", "[1, 2, 3].transformMapEntry(i, v, {v: i})", "{1: 0, 2: 1, 3: 2}"),
        ("transform_map_entry_filter", "[1, 2, 3].transformMapEntry(i, v, v > 1, {string(v): i})", "{\"2\": 1, \"3\": 2}"),
        ("transform_map_entry_several", "['a'].transformMapEntry(i, v, {v: 1, v + v: 2})", "{\"a\": 1, \"aa\": 2}"),
        ("transform_map_entry_empty_step", "[1, 2].transformMapEntry(i, v, {})", "{}"),
        ("transform_map_entry_duplicate", "{'greeting': 'aloha', 'farewell': 'aloha'}.transformMapEntry(k, v, {v: k})", "error: insert failed: key aloha already exists"),
        ("transform_map_entry_numeric_collision", "[dyn(1), dyn(1u)].transformMapEntry(i, v, {v: i})", "error: insert failed: key 1 already exists"),
        // `sortBy`, from cel-go's ext/lists.go documentation.
        ("sort_by_negated", "[3, 1, 2].sortBy(x, -x)", "[3, 2, 1]"),
        ("sort_by_field", "[{'name': 'b', 'n': dyn(2)}, {'name': 'a', 'n': dyn(1)}].sortBy(e, e.n).map(e, e.name)", "[\"a\", \"b\"]"),
        ("sort_by_string_key", "['bb', 'a', 'ccc'].sortBy(s, s.size())", "[\"a\", \"bb\", \"ccc\"]"),
        ("sort_by_empty", "[].sortBy(x, x)", "[]"),
        ("sort_by_mixed_keys", "[1, 2].sortBy(x, x == 1 ? dyn(1) : dyn('a'))", "error: list elements must have the same type"),
        ("sort_by_map_target", "{'a': 1}.sortBy(k, k)", "error: no matching overload for 'sortBy' applied to '(map)'"),
        ("transform_map_entry_not_a_map", "[1].transformMapEntry(i, v, v)", "error: no matching overload for 'cel.@mapInsert' applied to '(map, int)'"),
    ];
    for (name, expr, want) in cases {
        assert_eq!(eval_with(expr, &obj), want, "{name}");
    }
}

#[test]
fn variables_are_lazy_cached_and_ordered() {
    let obj = pod();
    let vars: Vec<(String, Program)> = [
        ("names", "object.spec.containers.map(c, c.name)"),
        ("count", "size(variables.names)"),
        ("broken", "1 / 0"),
        ("later", "variables.after"),
        ("after", "1"),
    ]
    .iter()
    .map(|(n, e)| (n.to_string(), compile(e).unwrap()))
    .collect();
    let exprs = [
        "variables.count == 2",
        "'a' in variables.names",
        "true || variables.broken == 1",
        "variables.broken",
        "variables.later",
        "variables.after",
        "has(variables.count) && !has(variables.nope)",
        "variables.nope",
        "variables.names",
    ];
    // Programs outlive the activation that caches what they produce.
    let programs: Vec<Program> = exprs.iter().map(|e| compile(e).unwrap()).collect();
    let mut act = Activation::new();
    act.bind_json("object", &obj);
    act.bind_variables(&vars);
    let results: Vec<String> = programs
        .iter()
        .map(|p| {
            p.evaluate(&act, &mut Budget::default())
                .map(|v| v.to_string())
                .unwrap_or_else(|e| format!("error: {e}"))
        })
        .collect();
    let want = [
        "true",
        "true",
        // An erroring variable only matters when read.
        "true",
        "error: division by zero",
        // A variable reads only the ones declared before it.
        "error: undeclared reference to 'variables.after' (in container '')",
        "1",
        "true",
        "error: undeclared reference to 'variables.nope' (in container '')",
        "[\"a\", \"b\"]",
    ];
    for ((expr, got), want) in exprs.iter().zip(&results).zip(want) {
        assert_eq!(got, want, "{expr}");
    }
    // Cached: reading again costs only the node visit.
    let mut budget = Budget::new(10);
    assert!(programs[8].evaluate(&act, &mut budget).is_ok());
    assert_eq!(budget.remaining(), 9);
}

#[test]
fn budget_is_charged_and_enforced() {
    let p = compile("[1, 2, 3].map(x, x * 2)").unwrap();
    let act = Activation::new();
    let mut budget = Budget::default();
    p.evaluate(&act, &mut budget).unwrap();
    let used = Budget::DEFAULT_LIMIT - budget.remaining();
    assert!((10..100).contains(&used), "{used}");
    let mut small = Budget::new(5);
    assert_eq!(
        p.evaluate(&act, &mut small).err(),
        Some(EvalError::CostBudgetExceeded)
    );
    // Exponential growth is stopped by the budget, not by memory.
    let bomb = compile(
        "[1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b, [1,2,3,4,5,6,7,8,9,10].map(c, [1,2,3,4,5,6,7,8,9,10].map(d, [1,2,3,4,5,6,7,8,9,10].map(e, [1,2,3,4,5,6,7,8,9,10].map(f, 'x'))))))",
    )
    .unwrap();
    assert_eq!(
        bomb.evaluate(&act, &mut Budget::default()).err(),
        Some(EvalError::CostBudgetExceeded)
    );
    // String doubling is charged by length.
    let strings = compile(
        "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30].map(i, 'x').join('').size() > 0 && ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'].all(s, (s + s + s + s + s + s + s + s).size() > 0)",
    )
    .unwrap();
    assert!(strings.evaluate(&act, &mut Budget::default()).is_ok());
    // Errors inside `&&` do not swallow an exhausted budget.
    let p = compile("[1, 2, 3].all(x, x > 0) && false").unwrap();
    assert_eq!(
        p.evaluate(&act, &mut Budget::new(3)).err(),
        Some(EvalError::CostBudgetExceeded)
    );
}

#[test]
fn deep_but_legal_programs_evaluate() {
    let expr = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let p = compile(&expr).unwrap();
    let act = Activation::new();
    assert!(p.evaluate(&act, &mut Budget::default()).is_ok());
    let sum = vec!["1"; 240].join(" + ");
    assert_eq!(eval_str(&sum), "240");
}

#[test]
fn public_api_shapes() {
    let obj = json!({"a": [1, "x", {"b": null}]});
    let p = compile("object.a").unwrap();
    let mut act = Activation::new();
    act.bind_json("object", &obj);
    let v = p.evaluate(&act, &mut Budget::default()).unwrap();
    assert_eq!(v.to_json(), Some(json!([1, "x", {"b": null}])));
    assert_eq!(v.as_bool(), None);
    let p = compile("{'k': [1u, dyn(2.5), duration('1s')]}").unwrap();
    let v = p.evaluate(&act, &mut Budget::default()).unwrap();
    assert_eq!(v.to_json(), Some(json!({"k": [1, 2.5, "1s"]})));
    act.bind("limit", Value::Int(3));
    let p = compile("size(object.a) <= limit").unwrap();
    let v = p.evaluate(&act, &mut Budget::default()).unwrap();
    assert_eq!(v.as_bool(), Some(true));
    let err = compile("object.spec.(").unwrap_err();
    assert_eq!((err.line, err.column), (1, 13));
    assert!(err
        .to_string()
        .starts_with("ERROR: <input>:1:13: Syntax error: mismatched input '('"));
    assert_eq!(
        err.one_line(),
        "at line 1, column 13: expected a field or function name after `.`, found `(`"
    );
}

#[test]
fn fields_of_small_middling_and_large_objects() {
    // Objects are searched differently below 9 keys, up to 16 and beyond.
    let fields = |n: usize| -> serde_json::Map<String, serde_json::Value> {
        (0..n).map(|i| (format!("f{i:02}"), json!(i))).collect()
    };
    for n in [3, 12, 40] {
        let obj = serde_json::Value::Object(fields(n));
        let last = format!("f{:02}", n - 1);
        let cases = [
            (format!("object.f00 + object.{last}"), format!("{}", n - 1)),
            (format!("has(object.{last})"), "true".to_string()),
            ("has(object.missing)".to_string(), "false".to_string()),
            (
                "object.missing".to_string(),
                "error: no such key: missing".to_string(),
            ),
            ("object.?missing.orValue(-1)".to_string(), "-1".to_string()),
            (format!("object.?{last}.orValue(-1)"), format!("{}", n - 1)),
            (format!("'{last}' in object"), "true".to_string()),
            (format!("object['{last}']"), format!("{}", n - 1)),
            (
                "object.all(k, object[k] >= 0)".to_string(),
                "true".to_string(),
            ),
        ];
        for (expr, want) in cases {
            assert_eq!(eval_with(&expr, &obj), want, "{n} keys: {expr}");
        }
    }
}

#[test]
fn long_literals_evaluate() {
    let items: Vec<String> = (0..40).map(|i| i.to_string()).collect();
    let list = format!("[{}]", items.join(", "));
    assert_eq!(eval_str(&format!("{list}.size()")), "40");
    assert_eq!(eval_str(&format!("{list}[39] + {list}[0]")), "39");
    let entries: Vec<String> = (0..20).map(|i| format!("'k{i}': {i}")).collect();
    let map = format!("{{{}}}", entries.join(", "));
    assert_eq!(eval_str(&format!("{map}.k19 + size({map})")), "39");
    assert_eq!(eval_str("[1, ?optional.none(), ?optional.of(2)]"), "[1, 2]");
    assert_eq!(
        eval_str("{'a': 1, ?'b': optional.none(), ?'c': optional.of(3)}.c"),
        "3"
    );
}
