use std::borrow::Cow;

use serde_json::{json, Value};

use super::*;
use crate::query::CACHE_TEXT;

fn search(expr: &str, data: &Value) -> Result<Value, String> {
    let q = Query::compile(expr).map_err(|e| e.to_string())?;
    q.search(data)
        .map(Cow::into_owned)
        .map_err(|e| e.to_string())
}

#[test]
fn missing_keys_follow_kyvernos_fork() {
    let data = json!({"a": {"b": 1, "n": null, "s": "x"}, "list": [{"k": 1}, {"j": 2}]});
    let cases: Vec<(&str, &str, Result<Value, String>)> = vec![
        ("present_key", "a.b", Ok(json!(1))),
        (
            "missing_key_is_an_error",
            "a.c",
            Err("Unknown key \"c\" in path".into()),
        ),
        (
            "missing_parent_is_an_error",
            "x.y",
            Err("Unknown key \"x\" in path".into()),
        ),
        ("null_value_is_not_an_error", "a.n", Ok(json!(null))),
        ("field_of_null_is_null", "a.n.deeper", Ok(json!(null))),
        (
            "long_path_stops_at_the_first_missing_key",
            "a.x.y.z",
            Err("Unknown key \"x\" in path".into()),
        ),
        ("long_path_through_null_is_null", "a.n.x.y", Ok(json!(null))),
        ("quoted_name_in_a_path", "a.\"b\"", Ok(json!(1))),
        (
            "escaped_quoted_name_in_a_path",
            "a.\"\\u0062\"",
            Ok(json!(1)),
        ),
        (
            "missing_quoted_name_is_named_unescaped",
            "a.\"\\u0063\"",
            Err("Unknown key \"c\" in path".into()),
        ),
        ("field_of_string_is_null", "a.s.deeper", Ok(json!(null))),
        (
            "or_absorbs_missing",
            "a.c || 'default'",
            Ok(json!("default")),
        ),
        ("or_right_missing_is_null", "a.c || a.d", Ok(json!(null))),
        ("and_left_missing_is_null", "a.c && 'x'", Ok(json!(null))),
        ("comparison_absorbs_missing", "a.c == null", Ok(json!(true))),
        ("not_absorbs_missing", "!(a.c)", Ok(json!(true))),
        ("not_binds_tighter_than_dot", "!a.c", Ok(json!(null))),
        (
            "function_argument_absorbs_missing",
            "to_string(a.c)",
            Ok(json!("null")),
        ),
        ("pipe_absorbs_missing", "a.c | @", Ok(json!(null))),
        ("projection_skips_missing", "list[*].k", Ok(json!([1]))),
        ("filter_skips_missing", "list[?k == `1`].k", Ok(json!([1]))),
        (
            "multiselect_absorbs_missing",
            "[a.b, a.c]",
            Ok(json!([1, null])),
        ),
        ("index_out_of_range_is_null", "list[5]", Ok(json!(null))),
        ("negative_index", "list[-1].j", Ok(json!(2))),
        ("slice", "list[1:].j", Ok(json!([2]))),
        ("flatten", "[[`1`], [`2`, `3`]][]", Ok(json!([1, 2, 3]))),
        ("object_values_skip_nulls", "a.*", Ok(json!([1, "x"]))),
        ("ordering_needs_numbers", "a.s > `1`", Ok(json!(null))),
        ("numbers_compare_as_floats", "`1` == `1.0`", Ok(json!(true))),
        ("multihash", "{x: a.b}", Ok(json!({"x": 1}))),
    ];
    for (name, expr, want) in cases {
        assert_eq!(search(expr, &data), want, "{name}: {expr}");
    }
}

#[test]
fn standard_functions_behave_as_go_jmespath() {
    let data = json!({"nums": [3, 1, 2], "strs": ["b", "a"], "o": {"x": 1, "y": 2}, "people": [{"n": "a", "age": 30}, {"n": "b", "age": 20}]});
    let cases: Vec<(&str, &str, Value)> = vec![
        ("abs", "abs(`-2`)", json!(2)),
        ("avg", "avg(nums)", json!(2)),
        ("avg_empty", "avg(`[]`)", json!(null)),
        ("ceil", "ceil(`1.2`)", json!(2)),
        ("floor", "floor(`1.8`)", json!(1)),
        ("contains_list", "contains(strs, 'a')", json!(true)),
        ("contains_string", "contains('foobar', 'oba')", json!(true)),
        ("ends_with", "ends_with('foobar', 'bar')", json!(true)),
        ("starts_with", "starts_with('foobar', 'bar')", json!(false)),
        ("join", "join(', ', strs)", json!("b, a")),
        ("keys", "keys(o)", json!(["x", "y"])),
        ("values", "values(o)", json!([1, 2])),
        (
            "length_string_counts_characters",
            "length('héllo')",
            json!(5),
        ),
        ("length_list", "length(nums)", json!(3)),
        ("map", "map(&n, people)", json!(["a", "b"])),
        ("max", "max(nums)", json!(3)),
        ("min_strings", "min(strs)", json!("a")),
        ("max_by", "max_by(people, &age).n", json!("a")),
        ("min_by", "min_by(people, &age).n", json!("b")),
        (
            "merge",
            "merge(o, `{\"y\": 3, \"z\": 4}`)",
            json!({"x": 1, "y": 3, "z": 4}),
        ),
        (
            "not_null",
            "not_null(missing_is_null_here, `null`, 'x')",
            json!("x"),
        ),
        ("reverse_list", "reverse(nums)", json!([2, 1, 3])),
        ("reverse_string", "reverse('abc')", json!("cba")),
        ("sort", "sort(nums)", json!([1, 2, 3])),
        ("sort_by", "sort_by(people, &age)[*].n", json!(["b", "a"])),
        ("to_array", "to_array('a')", json!(["a"])),
        ("to_number", "to_number('1.5')", json!(1.5)),
        ("to_number_bad", "to_number('x')", json!(null)),
        (
            "to_string_object_sorted",
            "to_string(`{\"b\": 1, \"a\": 2}`)",
            json!("{\"a\":2,\"b\":1}"),
        ),
        ("type", "type(o)", json!("object")),
    ];
    for (name, expr, want) in cases {
        assert_eq!(search(expr, &data), Ok(want), "{name}: {expr}");
    }
}

#[test]
fn type_errors_are_reported_as_go_jmespath_does() {
    assert_eq!(
        search("length(missing)", &json!({})),
        Err("Invalid type for: <nil>, expected: []jmespath.JpType{\"string\", \"array\", \"object\"}".into())
    );
}

#[test]
fn syntax_errors_say_what_was_expected_and_where() {
    let cases = [
        (
            "ends_too_early",
            "request.[",
            "syntax error at column 10: expected a value, found the end of the expression (after `request.[`)",
        ),
        (
            "operator_without_operand",
            "a || || b",
            "syntax error at column 6: expected a value, found `||` (after `a || `)",
        ),
        (
            "unclosed_parenthesis",
            "(a.b",
            "syntax error at column 5: expected `)` to close `(`, found the end of the expression (after `(a.b`)",
        ),
        (
            "bad_token_after_dot",
            "a.]",
            "syntax error at column 3: expected identifier, `*`, `{`, `[`, `&`, or `[?`, found `]` (after `a.`)",
        ),
    ];
    for (name, expr, want) in cases {
        assert_eq!(
            Query::compile(expr).unwrap_err().to_string(),
            want,
            "{name}"
        );
    }
}

#[test]
fn compile_errors_are_caught_before_evaluation() {
    let cases = [
        ("unknown_function", "nope(a)", "unknown function: nope()"),
        (
            "arity",
            "length(a, b)",
            "function length() takes 1 argument, not 2",
        ),
        (
            "variadic_arity",
            "merge()",
            "function merge() takes at least 1 arguments, not 0",
        ),
    ];
    for (name, expr, want) in cases {
        let err = Query::compile(expr).unwrap_err().to_string();
        assert!(err.contains(want), "{name}: {err}");
    }
    let deep = format!("{}a{}", "(".repeat(100), ")".repeat(100));
    assert_eq!(Query::compile(&deep), Err(CompileError::TooDeep));
}

/// Operator chains long enough to overflow the stack when parsed or
/// dropped are refused; shorter ones still work. (`tests/wasm_host.rs`
/// runs one in the guest's 1 MiB stack; debug frames here are larger.)
#[test]
fn long_operator_chains_are_too_deep_not_a_crash() {
    /// A chain of `n` operators.
    type Chain = fn(usize) -> String;
    let chains: [(&str, Chain); 7] = [
        ("projections", |n| format!("{}a", "a[].".repeat(n))),
        ("wildcard_projections", |n| {
            format!("{}a", "a[*].".repeat(n))
        }),
        ("indexes", |n| format!("a{}", "[0]".repeat(n))),
        ("pipes", |n| format!("{}a", "a|".repeat(n))),
        ("ors", |n| format!("{}a", "a||".repeat(n))),
        ("comparisons", |n| format!("{}a", "a==".repeat(n))),
        ("projections_with_indexes", |n| {
            format!("x{}", "[*].a[0][0]".repeat(n))
        }),
    ];
    let outcome = std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            for (name, chain) in chains {
                assert_eq!(
                    Query::compile(&chain(12_000)).err(),
                    Some(CompileError::TooDeep),
                    "{name}: long"
                );
                assert!(Query::compile(&chain(20)).is_ok(), "{name}: short");
            }
            // A long path does not nest.
            let path = format!("{}a", "a.".repeat(12_000));
            assert!(Query::compile(&path).is_ok());
        })
        .unwrap()
        .join();
    assert!(outcome.is_ok());
}

#[test]
fn what_a_query_builds_is_limited() {
    let data = json!({"name": "x".repeat(1000), "items": [1, 2, 3]});
    let doubling = |times: usize| format!("@{}", " | [@, @]".repeat(times));
    // Each pipe doubles the input: 10 doublings stay within the budget,
    // 30 would build terabytes.
    let within = search(&doubling(10), &data).unwrap();
    assert_eq!(within.as_array().map(Vec::len), Some(2));
    assert_eq!(
        search(&doubling(30), &data).unwrap_err(),
        "the query's results grow past 16 MiB (the limit per query)"
    );
    // Hashes and projections count too.
    let hashes = format!("@{}", " | {a: @, b: @}".repeat(30));
    assert!(search(&hashes, &data)
        .unwrap_err()
        .contains("the limit per query"));
    let projections = format!("@{}", " | [@, @][*]".repeat(30));
    assert!(search(&projections, &data)
        .unwrap_err()
        .contains("the limit per query"));
    // The budget is per search: the next one starts afresh.
    assert_eq!(search("items[0]", &data).unwrap(), json!(1));
    assert!(search(&doubling(10), &data).is_ok());
}

#[test]
fn a_text_compiled_again_answers_as_the_first_time() {
    let data = json!({"a": [1, 2, 3]});
    let long = format!("a[{}0]", " ".repeat(CACHE_TEXT));
    let cases: Vec<(&str, String, Result<Value, String>)> = vec![
        ("cached_query", "length(a)".into(), Ok(json!(3))),
        (
            "cached_syntax_error",
            "a[".into(),
            Err("syntax error at column 3: expected number, `:`, or `*`, found the end of the expression (after `a[`)".into()),
        ),
        ("cached_unknown_function", "nope(a)".into(), Err("unknown function: nope()".into())),
        ("text_too_long_to_keep", long, Ok(json!(1))),
    ];
    for (name, text, expected) in cases {
        for round in 0..3 {
            assert_eq!(search(&text, &data), expected, "{name}, round {round}");
        }
    }
    let first = Query::compile("a[0]");
    assert_eq!(Query::compile("a[0]"), first);
}

#[test]
fn a_scope_adds_top_level_fields_without_copying_them_in() {
    let data = json!({"request": {"name": "r"}, "element": "old"});
    let element = json!({"name": "c", "ports": [1, 2]});
    let index = json!(3);
    let shadow = json!("new");
    let scope: &[(&str, &Value)] = &[
        ("element", &shadow),
        ("element", &element),
        ("elementIndex", &index),
    ];
    let cases: Vec<(&str, &str, Value)> = vec![
        ("field_of_a_scope_entry", "element.name", json!("c")),
        ("later_entry_hides_earlier", "element.ports[1]", json!(2)),
        ("document_fields_still_read", "request.name", json!("r")),
        ("entries_in_functions", "length(element.ports)", json!(2)),
        (
            "entries_in_multiselect",
            "[elementIndex, request.name]",
            json!([3, "r"]),
        ),
        (
            "whole_document_holds_the_entries",
            "keys(@)",
            json!(["element", "elementIndex", "request"]),
        ),
        ("values_hold_the_entries", "length(*)", json!(3)),
        (
            "nested_at_is_not_the_document",
            "element.ports[?@ > `1`]",
            json!([2]),
        ),
        (
            "missing_key_still_absent",
            "request.other || 'none'",
            json!("none"),
        ),
    ];
    for (name, text, expected) in cases {
        let query = Query::compile(text).unwrap();
        let got = query.search_in(&data, scope).map(Cow::into_owned);
        assert_eq!(got, Ok(expected), "{name}");
    }
}

#[test]
fn what_a_query_may_read_at_the_top() {
    let cases = [
        ("named_field", "images.containers", true),
        ("other_field", "request.object.spec", false),
        ("field_below_the_top", "request.images", false),
        ("whole_document", "@", true),
        ("keys_of_the_document", "keys(@)", true),
        ("values_of_the_document", "*", true),
        (
            "at_in_a_projection_is_an_element",
            "request.items[].keys(@)",
            false,
        ),
        (
            "at_in_a_filter_is_an_element",
            "request.items[?@ == 'images']",
            false,
        ),
        ("function_argument", "length(images)", true),
        ("either_side_of_or", "request.x || images", true),
        (
            "expression_reference",
            "sort_by(request.items, &images)",
            false,
        ),
        ("list_of_the_document", "[@][0].images", true),
    ];
    for (name, text, expected) in cases {
        let query = Query::compile(text).unwrap();
        assert_eq!(query.may_read("images"), expected, "{name}");
    }
}

#[test]
fn a_list_search_gives_the_elements_a_search_gives() {
    let data = json!({"spec": {"containers": [{"n": 1}, {"n": 2}], "init": [{"n": 3}],
        "empty": [], "name": "x", "nested": [[1, 2], [3]]}});
    let cases = [
        ("flatten_of_multiselect", "spec.[init, containers][]"),
        ("multiselect", "spec.[init, containers]"),
        ("flatten", "spec.nested[]"),
        ("plain_list", "spec.containers"),
        ("projection", "spec.containers[].n"),
        ("not_a_list", "spec.name"),
        ("null", "spec.none || null"),
        ("flatten_of_missing", "spec.missing[]"),
        ("multiselect_of_null", "spec.none.[a, b]"),
        ("empty_list", "spec.empty"),
        ("missing_key", "spec.missing"),
        ("missing_before_multiselect", "missing.[a, b][]"),
        ("projection_of_missing", "spec.missing[].n"),
        (
            "projection_dropping_nulls",
            "spec.[init, containers, none][].n",
        ),
        ("projection_of_a_non_list", "spec.name[].n"),
        ("object_projection", "spec.*.n"),
    ];
    for (name, text) in cases {
        let query = Query::compile(text).unwrap();
        let whole = query.search(&data).map(Cow::into_owned);
        let listed = query
            .search_list_in(&data, &[])
            .map(|items| items.into_iter().map(Cow::into_owned).collect::<Vec<_>>());
        let expected = whole.map(|v| match v {
            Value::Array(items) => items,
            other => vec![other],
        });
        assert_eq!(listed, expected, "{name}");
    }
}

/// Counting a flatten or projection reads its elements in place; the
/// count, and the errors of what is not a list, are the listing's own.
#[test]
fn counting_a_listing_gives_the_listed_length() {
    let data = json!({"spec": {
        "containers": [{"name": "a", "ports": [1, 2]}, {"name": "b"}, {"name": "c", "ports": [3]}],
        "empty": [], "text": "abc"}});
    let cases: Vec<(&str, &str, Result<Value, String>)> = vec![
        ("flatten_piped", "spec.containers[] | length(@)", Ok(json!(3))),
        ("flatten_argument", "length(spec.containers[])", Ok(json!(3))),
        ("projection_drops_nulls", "spec.containers[].ports | length(@)", Ok(json!(2))),
        ("nested_flatten", "spec.containers[].ports[] | length(@)", Ok(json!(3))),
        ("filter", "spec.containers[?ports] | length(@)", Ok(json!(2))),
        ("filter_argument", "length(spec.containers[?name == 'b'])", Ok(json!(1))),
        ("empty_list", "spec.empty[] | length(@)", Ok(json!(0))),
        ("multi_list", "spec.[containers, empty][] | length(@)", Ok(json!(3))),
        ("plain_field_still_counts", "spec.text | length(@)", Ok(json!(3))),
        (
            "missing_list_is_null",
            "spec.missing[] | length(@)",
            Err("Invalid type for: <nil>, expected: []jmespath.JpType{\"string\", \"array\", \"object\"}".into()),
        ),
        (
            "flatten_of_a_string_is_null",
            "length(spec.text[])",
            Err("Invalid type for: <nil>, expected: []jmespath.JpType{\"string\", \"array\", \"object\"}".into()),
        ),
    ];
    for (name, expr, want) in cases {
        assert_eq!(search(expr, &data), want, "{name}");
        // The same listing, copied whole before it is counted.
        let copied = match expr.strip_prefix("length(") {
            Some(inner) => format!("length([{}][0])", inner.trim_end_matches(')')),
            None => expr.replace("| length(@)", "| [@][0] | length(@)"),
        };
        assert_eq!(search(&copied, &data), want, "{name}: copied");
    }
}
