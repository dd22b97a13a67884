use super::*;
use serde_json::json;

fn render(text: &str, ctx: &Context) -> Result<Value, String> {
    Template::compile(text, "", ctx.is_delete())
        .render(ctx)
        .map_err(|e| e.to_string())
}

#[test]
fn substitution_keeps_kyvernos_typing() {
    let ctx = Context::from_value(json!({
        "n": 5, "f": 1.5, "b": false, "s": "str", "z": null,
        "m": {"key2": "value2", "key1": "value1"}, "l": ["a", "b"],
        "inner": "n", "self": "{{s}}", "amp": "a<b",
        "raw": "{{ KEEP {{ME}} }}", "nested": "{{s}}", "bs": "x\\"
    }));
    let cases: Vec<(&str, &str, Value)> = vec![
        ("whole_variable_keeps_number", "{{n}}", json!(5)),
        ("whole_variable_with_spaces", "{{ n }}", json!(5)),
        (
            "whole_variable_keeps_map",
            "{{m}}",
            json!({"key2": "value2", "key1": "value1"}),
        ),
        ("whole_variable_null", "{{z}}", json!(null)),
        ("embedded_number_is_text", "n={{n}}", json!("n=5")),
        ("leading_space_makes_text", " {{n}}", json!(" 5")),
        ("embedded_float", "{{f}}x", json!("1.5x")),
        ("embedded_bool", "is {{b}}", json!("is false")),
        ("embedded_null", "content = {{z}}", json!("content = null")),
        (
            "embedded_map_sorted_json",
            "content is {{m}}",
            json!("content is {\"key1\":\"value1\",\"key2\":\"value2\"}"),
        ),
        ("embedded_list", "{{l}}!", json!("[\"a\",\"b\"]!")),
        ("two_variables", "{{s}}-{{n}}", json!("str-5")),
        ("nested_variable", "{{ {{inner}} }}", json!(5)),
        ("nested_in_path", "x{{m.{{ 'key1' }}}}", json!("xvalue1")),
        ("escaped_is_left_alone", "\\{{s}}", json!("{{s}}")),
        (
            "escaped_with_inner_resolved",
            "\\{{m.{{ 'key1' }}}}",
            json!("{{m.key1}}"),
        ),
        (
            "shallow_value_is_not_substituted",
            "{{- raw }} {{n}} {{nested}}",
            json!("{{ KEEP {{ME}} }} 5 str"),
        ),
        (
            "shallow_last_stops_the_rescan",
            "{{n}} {{- nested}}",
            json!("5 {{s}}"),
        ),
        (
            "shallow_whole_variable",
            "{{- raw }}",
            json!("{{ KEEP {{ME}} }}"),
        ),
        (
            "substituted_text_is_scanned_again",
            "v={{self}}",
            json!("v=str"),
        ),
        (
            "whole_string_value_is_not_rescanned",
            "{{self}}",
            json!("{{s}}"),
        ),
        (
            "html_is_escaped_inside_json_only",
            "{{amp}} {{l}}",
            json!("a<b [\"a\",\"b\"]"),
        ),
        // Kyverno's pattern takes the character before `{{`: a variable
        // right after another is found only when the result is rescanned.
        (
            "adjacent_variables_meet_on_the_rescan",
            "{{s}}{{n}}",
            json!("str5"),
        ),
        (
            "adjacent_after_a_shallow_one_stays",
            "{{- s}}{{n}}",
            json!("str{{n}}"),
        ),
        (
            "adjacent_after_a_backslash_is_escaped",
            "{{bs}}{{n}}",
            json!("x{{n}}"),
        ),
        (
            "multiselect_hash_in_variable",
            "{{ {x: s} }}",
            json!({"x": "str"}),
        ),
    ];
    for (name, text, want) in cases {
        assert_eq!(render(text, &ctx), Ok(want), "{name}: {text}");
    }
}

#[test]
fn missing_variables_are_errors_with_their_name() {
    let ctx = Context::from_value(json!({"request": {"object": {"metadata": {}}}}));
    assert_eq!(
        render("{{ request.object.metadata.name }}", &ctx),
        Err("failed to resolve request.object.metadata.name at path : JMESPath query failed: Unknown key \"name\" in path".into())
    );
    assert_eq!(
        render("{{ request.object.metadata.name || 'none' }}", &ctx),
        Ok(json!("none"))
    );
    assert_eq!(
        render("{{ }}", &ctx),
        Err("failed to resolve  at path : invalid query (nil)".into())
    );
}

#[test]
fn delete_requests_read_the_old_object() {
    let raw = json!({"operation": "DELETE", "oldObject": {"metadata": {"name": "old"}}});
    let ctx = Context::new(raw);
    assert_eq!(
        render("{{ request.object.metadata.name }}", &ctx),
        Ok(json!("old"))
    );
}

#[test]
fn documents_substitute_keys_and_values() {
    let ctx = Context::from_value(json!({"k": "label", "v": "x", "obj": {"inner": "{{v}}"}}));
    let doc = Document::compile(
        &json!({"metadata": {"labels": {"{{k}}": "{{v}}"}}, "n": 1, "o": "{{obj}}"}),
        "",
        false,
    );
    assert_eq!(
        doc.render(&ctx),
        Ok(json!({"metadata": {"labels": {"label": "x"}}, "n": 1, "o": {"inner": "x"}}))
    );
    assert!(Document::compile(&json!({"a": 1}), "", false).is_plain());
    let bad = Document::compile(&json!({"a": "{{ a.[ }}"}), "", false);
    assert_eq!(bad.problems().len(), 1);
}

#[test]
fn at_sign_reads_the_path_kyverno_builds() {
    // Kyverno skips two parts of the pointer (meant for `validate.pattern`,
    // though the pointer starts inside the pattern) and any up to `foreach`.
    let cases = [
        (
            "two_parts_are_the_whole_object",
            "/spec/kind",
            "request.object",
        ),
        (
            "three_parts_keep_the_last",
            "/metadata/labels/app",
            "request.object.app",
        ),
        (
            "indices_in_brackets",
            "/spec/containers/0/name",
            "request.object[0].name",
        ),
        (
            "after_foreach",
            "/validate/foreach/0/spec/x/y",
            "request.object.x.y",
        ),
        (
            "anchors_stay_plain",
            "/a/b/=(c)/(d)",
            "request.object.\"=(c)\".(d)",
        ),
        (
            "other_names_quoted",
            "/a/b/metadata/labels/app.kubernetes.io\\/name",
            "request.object.metadata.labels.\"app.kubernetes.io/name\"",
        ),
    ];
    for (name, pointer, want) in cases {
        assert_eq!(at_path(pointer), want, "{name}");
    }
    let ctx = Context::from_value(json!({"request": {"object": {"app": "web"}}}));
    let t = Template::compile("{{@}}", "/metadata/labels/app", false);
    assert_eq!(t.render(&ctx), Ok(json!("web")));
}

/// The expression inside a span, as Kyverno's `replaceBracesAndTrimSpaces`
/// (drop every `{{` and `}}`, trim, then a leading `-` asks for shallow).
#[test]
fn variable_text_drops_braces_and_spaces_as_kyverno() {
    let reference = |span: &str| {
        let text = span.replace("{{", "").replace("}}", "");
        let text = text.trim();
        match text.strip_prefix('-') {
            Some(rest) => (rest.trim().to_string(), true),
            None => (text.to_string(), false),
        }
    };
    let cases = [
        ("plain", "{{a}}", "a", false),
        (
            "spaces",
            "{{  request.object.name }}",
            "request.object.name",
            false,
        ),
        ("shallow", "{{- x }}", "x", true),
        ("shallow_without_space", "{{-x}}", "x", true),
        ("one_brace_level", "{{ {a: `b`} }}", "{a: `b`}", false),
        ("braces_against_the_end", "{{{a}}}", "{a}", false),
        ("literal_with_closing_pair", "{{ `}}` }}", "``", false),
        ("empty", "{{}}", "", false),
        ("only_spaces", "{{   }}", "", false),
    ];
    for (name, span, text, shallow) in cases {
        let got = variable_text(span);
        assert_eq!(got, (text.to_string(), shallow), "{name}");
        assert_eq!(got, reference(span), "{name}");
    }
}
