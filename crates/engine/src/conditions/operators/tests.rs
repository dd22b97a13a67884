use super::*;
use serde_json::json;

/// (case name, key, operator, value, expected result)
type Case = (&'static str, Value, &'static str, Value, bool);

fn check(cases: Vec<Case>) {
    for (name, key, op, value, want) in cases {
        let operator = Operator::parse(op).unwrap_or_else(|| panic!("{name}: operator {op}"));
        assert_eq!(
            operator.evaluate(&key, &value),
            want,
            "{name}: {key} {op} {value}"
        );
    }
}

#[test]
fn equals_treats_the_value_as_the_pattern() {
    check(vec![
        ("strings", json!("a"), "Equals", json!("a"), true),
        (
            "wildcard_value",
            json!("kube-system"),
            "Equals",
            json!("kube-*"),
            true,
        ),
        (
            "wildcard_key_is_literal",
            json!("kube-*"),
            "Equals",
            json!("kube-system"),
            false,
        ),
        (
            "number_and_numeric_string",
            json!(5),
            "Equals",
            json!("5"),
            true,
        ),
        (
            "string_key_number_value_is_false",
            json!("5"),
            "Equals",
            json!(5),
            false,
        ),
        ("durations", json!("1h"), "Equals", json!("60m"), true),
        (
            "duration_and_seconds",
            json!("1m"),
            "Equals",
            json!(60),
            true,
        ),
        ("quantities", json!("1Gi"), "Equals", json!("1024Mi"), true),
        ("milli_quantity", json!("1000m"), "Equals", json!("1"), true),
        (
            "non_quantity_value_is_a_wildcard",
            json!("1"),
            "Equals",
            json!("?"),
            true,
        ),
        ("bools", json!(true), "Equals", json!(true), true),
        (
            "bool_and_string",
            json!(true),
            "Equals",
            json!("true"),
            false,
        ),
        (
            "maps_deep_equal",
            json!({"a": [1]}),
            "Equals",
            json!({"a": [1.0]}),
            true,
        ),
        (
            "lists_deep_equal",
            json!(["a"]),
            "Equals",
            json!(["a", "b"]),
            false,
        ),
        ("null_key_is_false", json!(null), "Equals", json!(""), false),
        ("legacy_name", json!("a"), "Equal", json!("a"), true),
    ]);
}

#[test]
fn not_equals_is_true_on_most_mismatches() {
    check(vec![
        (
            "different_strings",
            json!("a"),
            "NotEquals",
            json!("b"),
            true,
        ),
        (
            "wildcard_match",
            json!("kube-system"),
            "NotEquals",
            json!("kube-*"),
            false,
        ),
        ("string_vs_number", json!("a"), "NotEquals", json!(1), true),
        (
            "number_vs_bad_string",
            json!(1),
            "NotEquals",
            json!("x"),
            true,
        ),
        (
            "quantity_vs_empty_string",
            json!("300Mi"),
            "NotEquals",
            json!(""),
            true,
        ),
        (
            "null_key_is_false",
            json!(null),
            "NotEquals",
            json!(""),
            false,
        ),
        ("map_vs_string", json!({}), "NotEquals", json!("x"), true),
        (
            "operation",
            json!("CREATE"),
            "NotEquals",
            json!("DELETE"),
            true,
        ),
        ("legacy_name", json!("a"), "NotEqual", json!("a"), false),
    ]);
}

#[test]
fn any_not_in_matches_kyvernos_unit_tests() {
    check(vec![
        (
            "string_in_value",
            json!("kyverno"),
            "AnyNotIn",
            json!("kyverno"),
            false,
        ),
        (
            "string_in_wildcard_list",
            json!("kube-system"),
            "AnyNotIn",
            json!(["default", "kube-*"]),
            false,
        ),
        (
            "list_in_wildcard",
            json!(["kube-system", "kube-public"]),
            "AnyNotIn",
            json!("kube-*"),
            false,
        ),
        (
            "list_partially_in",
            json!(["kube-system", "default"]),
            "AnyNotIn",
            json!("kube-system"),
            true,
        ),
        (
            "ints_partially_in",
            json!([1, 2, 3]),
            "AnyNotIn",
            json!(2),
            true,
        ),
        (
            "floats_partially_in",
            json!([1.1, 2.2, 3.3]),
            "AnyNotIn",
            json!(1.1),
            true,
        ),
        (
            "bools_partially_in",
            json!([true, false]),
            "AnyNotIn",
            json!(true),
            true,
        ),
        (
            "lists_partially_in",
            json!(["default", "kyverno"]),
            "AnyNotIn",
            json!(["kube-*", "ky*"]),
            true,
        ),
        (
            "empty_key_list",
            json!([]),
            "AnyNotIn",
            json!(["default"]),
            false,
        ),
        (
            "empty_string_not_in",
            json!(""),
            "AnyNotIn",
            json!(["default", "kyverno"]),
            true,
        ),
        ("int_in_string", json!(64), "AnyNotIn", json!("64"), false),
        ("int_in_list", json!(1), "AnyNotIn", json!([1, 2, 3]), false),
        (
            "float_in_list",
            json!(2.2),
            "AnyNotIn",
            json!([1.1, 2.2, 3.3]),
            false,
        ),
        (
            "bool_key_is_unsupported",
            json!(true),
            "AnyNotIn",
            json!(true),
            false,
        ),
        (
            "json_list_in_string",
            json!("b"),
            "AnyNotIn",
            json!("[\"a\", \"b\"]"),
            false,
        ),
        (
            "json_non_list_string_is_invalid",
            json!(["a"]),
            "AnyNotIn",
            json!("{\"a\": 1}"),
            false,
        ),
        (
            "range_outside",
            json!([5, 50]),
            "AnyNotIn",
            json!("1-10"),
            true,
        ),
        (
            "range_inside",
            json!([5, 6]),
            "AnyNotIn",
            json!("1-10"),
            false,
        ),
    ]);
}

#[test]
fn any_in_and_all_in() {
    check(vec![
        (
            "any_in_list",
            json!(["a", "x"]),
            "AnyIn",
            json!(["a", "b"]),
            true,
        ),
        (
            "any_in_none",
            json!(["x"]),
            "AnyIn",
            json!(["a", "b"]),
            false,
        ),
        (
            "any_in_key_is_pattern_too",
            json!("kube-*"),
            "AnyIn",
            json!(["kube-system"]),
            true,
        ),
        ("any_in_bool", json!(true), "AnyIn", json!([true]), true),
        ("any_in_range", json!(5), "AnyIn", json!("1-10"), true),
        ("any_in_plain_string", json!("a"), "AnyIn", json!("a"), true),
        (
            "any_in_number_value_scalar_key_is_invalid",
            json!(1),
            "AnyIn",
            json!(1),
            false,
        ),
        (
            "all_in",
            json!(["a", "b"]),
            "AllIn",
            json!(["a", "b", "c"]),
            true,
        ),
        (
            "all_in_missing_one",
            json!(["a", "d"]),
            "AllIn",
            json!(["a", "b"]),
            false,
        ),
        ("all_in_empty_key", json!([]), "AllIn", json!(["a"]), true),
        (
            "all_in_scalar_key_pattern",
            json!("kube-*"),
            "AllIn",
            json!(["kube-system"]),
            true,
        ),
        (
            "all_in_scalar_value_pattern_either_way",
            json!("kube-system"),
            "AllIn",
            json!(["kube-*"]),
            true,
        ),
        (
            "all_in_plain_string_is_one_element",
            json!("a"),
            "AllIn",
            json!("b"),
            false,
        ),
        (
            "all_in_bool_key_printed",
            json!(true),
            "AllIn",
            json!([true]),
            true,
        ),
        (
            "all_not_in_means_none_in",
            json!(["a", "b"]),
            "AllNotIn",
            json!(["a"]),
            false,
        ),
        (
            "all_not_in_none_in",
            json!(["c", "d"]),
            "AllNotIn",
            json!(["a*"]),
            true,
        ),
        (
            "all_not_in_value_pattern_either_way",
            json!(["default", "kyverno"]),
            "AllNotIn",
            json!(["kube-*", "ky*"]),
            false,
        ),
        (
            "all_not_in_plain_string",
            json!("kyverno"),
            "AllNotIn",
            json!("default"),
            true,
        ),
        (
            "all_not_in_null_string_is_empty",
            json!(["a"]),
            "AllNotIn",
            json!("null"),
            true,
        ),
        (
            "all_not_in_all_in",
            json!(["a"]),
            "AllNotIn",
            json!(["a", "b"]),
            false,
        ),
        (
            "all_not_in_single_equal_string",
            json!(["a"]),
            "AllNotIn",
            json!("a"),
            false,
        ),
        (
            "all_not_in_string_key_value_pattern",
            json!("kube-system"),
            "AllNotIn",
            json!(["default", "kube-*"]),
            false,
        ),
        (
            "all_not_in_scalar",
            json!("c"),
            "AllNotIn",
            json!(["a", "b"]),
            true,
        ),
    ]);
}

#[test]
fn legacy_in_and_not_in_use_exact_sets() {
    check(vec![
        (
            "in_scalar_value_pattern_either_way",
            json!("hello-world"),
            "In",
            json!(["hello-*", "goodbye"]),
            true,
        ),
        (
            "in_bool_key_printed",
            json!(true),
            "In",
            json!(["true", "false"]),
            true,
        ),
        (
            "in_list",
            json!(["a", "b"]),
            "In",
            json!(["a", "b", "c"]),
            true,
        ),
        (
            "in_list_no_wildcards",
            json!(["a"]),
            "In",
            json!(["*"]),
            false,
        ),
        ("in_scalar_json", json!("a"), "In", json!("[\"a\"]"), true),
        ("in_scalar_wildcard", json!("abc"), "In", json!("a*"), true),
        ("not_in", json!(["a", "x"]), "NotIn", json!(["a"]), true),
        (
            "not_in_all_present",
            json!(["a"]),
            "NotIn",
            json!(["a", "b"]),
            false,
        ),
        ("non_string_list_key", json!([1]), "In", json!(["1"]), false),
    ]);
}

#[test]
fn numeric_operators_try_duration_quantity_number_semver() {
    check(vec![
        ("numbers", json!(5), "GreaterThan", json!(3), true),
        (
            "number_vs_numeric_string",
            json!(5),
            "GreaterThan",
            json!("3"),
            true,
        ),
        (
            "equal_numbers",
            json!(3),
            "GreaterThanOrEquals",
            json!(3),
            true,
        ),
        ("less_than", json!(2), "LessThan", json!(3), true),
        (
            "less_than_or_equals",
            json!(4),
            "LessThanOrEquals",
            json!(3),
            false,
        ),
        ("durations", json!("2h"), "GreaterThan", json!("90m"), true),
        (
            "duration_vs_seconds",
            json!("2m"),
            "GreaterThan",
            json!(100),
            true,
        ),
        (
            "quantities",
            json!("2Gi"),
            "GreaterThan",
            json!("1500Mi"),
            true,
        ),
        (
            "milli_cpu_is_a_duration_then_a_quantity",
            json!("250m"),
            "LessThan",
            json!("1"),
            true,
        ),
        (
            "string_numbers_as_quantities",
            json!("1.5"),
            "LessThan",
            json!("2"),
            true,
        ),
        (
            "semver",
            json!("1.10.0"),
            "GreaterThan",
            json!("1.9.3"),
            true,
        ),
        (
            "semver_needs_three_parts",
            json!("v1.10.0"),
            "GreaterThan",
            json!("v1.9.3"),
            false,
        ),
        (
            "number_vs_quantity_string_is_false",
            json!(5),
            "GreaterThan",
            json!("1Ki"),
            false,
        ),
        (
            "bool_key_is_false",
            json!(true),
            "GreaterThan",
            json!(1),
            false,
        ),
        (
            "null_key_is_false",
            json!(null),
            "LessThan",
            json!(1),
            false,
        ),
    ]);
}

#[test]
fn duration_operators_match_kyvernos_unit_tests() {
    check(vec![
        (
            "strings_greater",
            json!("2h"),
            "DurationGreaterThan",
            json!("1h"),
            true,
        ),
        (
            "strings_smaller",
            json!("1h"),
            "DurationGreaterThan",
            json!("2h"),
            false,
        ),
        (
            "float_vs_int_seconds",
            json!(120.5),
            "DurationGreaterThan",
            json!(60),
            true,
        ),
        (
            "float_vs_duration",
            json!(120.0),
            "DurationGreaterThan",
            json!("1m"),
            true,
        ),
        (
            "bools_unsupported",
            json!(true),
            "DurationGreaterThan",
            json!(false),
            false,
        ),
        (
            "equal_is_not_greater",
            json!("60m"),
            "DurationGreaterThan",
            json!("1h"),
            false,
        ),
        (
            "minutes_over_hour",
            json!("61m"),
            "DurationGreaterThan",
            json!("1h"),
            true,
        ),
        (
            "greater_or_equal",
            json!("1h"),
            "DurationGreaterThanOrEquals",
            json!("60m"),
            true,
        ),
        (
            "less_than",
            json!("30s"),
            "DurationLessThan",
            json!("1m"),
            true,
        ),
        (
            "less_or_equal",
            json!(60),
            "DurationLessThanOrEquals",
            json!("1m"),
            true,
        ),
        (
            "zero_is_a_duration_here",
            json!("0"),
            "DurationLessThan",
            json!("1s"),
            true,
        ),
    ]);
}

#[test]
fn literal_integers_in_lists_and_maps_are_int64_as_in_kyverno() {
    // (case name, key, key is a literal list/map, operator, value, value is
    // a literal list/map, expected): a JMESPath result's numbers are Go
    // float64s, a literal's are int64s inside a list or map.
    let cases = [
        (
            "jmespath_list_equals_int_list",
            json!([1]),
            false,
            "Equals",
            json!([1]),
            true,
            false,
        ),
        (
            "jmespath_list_not_equals_int_list",
            json!([1]),
            false,
            "NotEquals",
            json!([1]),
            true,
            true,
        ),
        (
            "literal_lists_equal",
            json!([1]),
            true,
            "Equals",
            json!([1]),
            true,
            true,
        ),
        (
            "jmespath_lists_equal",
            json!([1]),
            false,
            "Equals",
            json!([1.0]),
            false,
            true,
        ),
        (
            "fractions_are_float_either_way",
            json!([1.5]),
            false,
            "Equals",
            json!([1.5]),
            true,
            true,
        ),
        (
            "decimal_point_literal_is_float",
            json!([1]),
            false,
            "Equals",
            json!([1.0]),
            true,
            true,
        ),
        (
            "maps_too",
            json!({"a": 1}),
            false,
            "Equals",
            json!({"a": 1}),
            true,
            false,
        ),
        (
            "int_list_key_prints_whole",
            json!([1000000]),
            true,
            "AnyIn",
            json!(["1000000"]),
            true,
            true,
        ),
        (
            "float_list_key_prints_exponent",
            json!([1000000]),
            false,
            "AnyIn",
            json!(["1000000"]),
            true,
            false,
        ),
        (
            "string_key_in_int_list",
            json!("1000000"),
            false,
            "AnyIn",
            json!([1000000]),
            true,
            true,
        ),
        (
            "string_key_in_float_list",
            json!("1000000"),
            false,
            "AnyIn",
            json!([1000000]),
            false,
            false,
        ),
        (
            "all_in_int_list",
            json!(["1000000"]),
            true,
            "AllIn",
            json!([1000000]),
            true,
            true,
        ),
        (
            "legacy_in_int_list",
            json!("1000000"),
            false,
            "In",
            json!([1000000]),
            true,
            true,
        ),
        (
            "small_numbers_print_alike",
            json!([5]),
            false,
            "AnyIn",
            json!(["5"]),
            true,
            true,
        ),
    ];
    let origin = |literal: bool| {
        if literal {
            Origin::Literal
        } else {
            Origin::Float
        }
    };
    for (name, key, key_literal, op, value, value_literal, want) in cases {
        let operator = Operator::parse(op).unwrap_or_else(|| panic!("{name}: operator {op}"));
        assert_eq!(
            operator.evaluate_typed(&key, origin(key_literal), &value, origin(value_literal)),
            want,
            "{name}"
        );
    }
}

#[test]
fn an_operand_with_substituted_parts_types_each_part_by_its_origin() {
    let doc = Document::compile(
        &json!([1, "{{ request.x }}", {"n": 2, "v": "{{ request.y }}"}]),
        "",
        false,
    );
    let origin = Origin::of(&doc);
    assert_eq!(origin.item(0), Origin::Literal);
    assert_eq!(origin.item(1), Origin::Float);
    assert_eq!(origin.item(2).entry("n"), Origin::Literal);
    assert_eq!(origin.item(2).entry("v"), Origin::Float);
    assert_eq!(
        Origin::of(&Document::compile(&json!(7), "", false)),
        Origin::Float
    );
    assert_eq!(
        Origin::of(&Document::compile(&json!([7]), "", false)),
        Origin::Literal
    );
    let rendered = json!([1000000, 1000000]);
    assert_eq!(sprint(&rendered, origin), "[1000000 1e+06]");
}

#[test]
fn seconds_beyond_int64_nanoseconds_wrap_around_as_in_go() {
    check(vec![
        // 1e10 s is 1e19 ns, past int64: Go's product wraps negative.
        (
            "wrapped_key_is_negative",
            json!(10_000_000_000u64),
            "GreaterThan",
            json!("1h"),
            false,
        ),
        (
            "wrapped_value_is_negative",
            json!("1h"),
            "GreaterThan",
            json!(10_000_000_000u64),
            true,
        ),
        (
            "deprecated_operator_too",
            json!(10_000_000_000u64),
            "DurationGreaterThan",
            json!(1),
            false,
        ),
        (
            "just_inside_int64",
            json!(9_000_000_000u64),
            "GreaterThan",
            json!("1h"),
            true,
        ),
        (
            "fractions_truncate",
            json!("1s"),
            "Equals",
            json!(1.9),
            true,
        ),
    ]);
}
