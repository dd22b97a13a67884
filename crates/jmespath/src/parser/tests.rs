//! The parser against the `jmespath` crate it replaced: the same tree, or
//! the same error message, for every expression of a corpus of hand-written
//! queries, the conformance corpus's variables when it is present, and
//! random token strings.

use jmespath::ast::{Ast, Comparator as AstComparator};

use serde_json::Value;

use crate::ast::{Comparator, Function, Node};
use crate::error::{check_arity, syntax_error, CompileError, MAX_DEPTH};

fn comparator_of(c: &AstComparator) -> Comparator {
    match c {
        AstComparator::Equal => Comparator::Equal,
        AstComparator::NotEqual => Comparator::NotEqual,
        AstComparator::LessThan => Comparator::LessThan,
        AstComparator::LessThanEqual => Comparator::LessThanEqual,
        AstComparator::GreaterThan => Comparator::GreaterThan,
        AstComparator::GreaterThanEqual => Comparator::GreaterThanEqual,
    }
}

/// The crate's parse and the conversion of its tree the engine used.
fn reference(text: &str) -> Result<Node, CompileError> {
    let ast = jmespath::parse(text).map_err(|e| {
        let reason = match &e.reason {
            jmespath::ErrorReason::Parse(p) => p.clone(),
            jmespath::ErrorReason::Runtime(_) => String::new(),
        };
        CompileError::Syntax(syntax_error(text, e.offset, &reason))
    })?;
    reference_convert(&ast, text, 0)
}

fn reference_convert(ast: &Ast, text: &str, depth: usize) -> Result<Node, CompileError> {
    if depth > 4 * MAX_DEPTH {
        return Err(CompileError::TooDeep);
    }
    let sub = |a: &Ast| reference_convert(a, text, depth + 1).map(Box::new);
    let pair = |a: &Ast, b: &Ast| -> Result<Box<(Node, Node)>, CompileError> {
        Ok(Box::new((
            reference_convert(a, text, depth + 1)?,
            reference_convert(b, text, depth + 1)?,
        )))
    };
    Ok(match ast {
        Ast::Identity { .. } => Node::Identity,
        Ast::Field { name, .. } => Node::Field(crate::Name::from(name.as_str())),
        Ast::Index { idx, .. } => Node::Index(*idx),
        Ast::Slice {
            start, stop, step, ..
        } => Node::Slice {
            start: *start,
            stop: *stop,
            step: *step,
        },
        Ast::Literal { value, .. } => {
            Node::Literal(serde_json::to_value(&**value).unwrap_or(Value::Null))
        }
        Ast::Subexpr { offset, lhs, rhs } => {
            // The crate parses `a | b` and `a.b` into the same node; the
            // token at `offset` tells them apart.
            if text.chars().nth(*offset) == Some('|') {
                Node::Pipe(pair(lhs, rhs)?)
            } else {
                let (lhs, rhs) = *pair(lhs, rhs)?;
                Node::subexpr(lhs, rhs)
            }
        }
        Ast::Projection { lhs, rhs, .. } => Node::Projection(pair(lhs, rhs)?),
        Ast::ObjectValues { node, .. } => Node::ObjectValues(sub(node)?),
        Ast::Flatten { node, .. } => Node::Flatten(sub(node)?),
        Ast::Condition {
            predicate, then, ..
        } => Node::Condition(pair(predicate, then)?),
        Ast::Comparison {
            comparator,
            lhs,
            rhs,
            ..
        } => Node::Comparison(comparator_of(comparator), pair(lhs, rhs)?),
        Ast::And { lhs, rhs, .. } => Node::And(pair(lhs, rhs)?),
        Ast::Or { lhs, rhs, .. } => Node::Or(pair(lhs, rhs)?),
        Ast::Not { node, .. } => Node::Not(sub(node)?),
        Ast::MultiList { elements, .. } => Node::MultiList(
            elements
                .iter()
                .map(|e| reference_convert(e, text, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Ast::MultiHash { elements, .. } => Node::MultiHash(
            elements
                .iter()
                .map(|kv| {
                    Ok((
                        crate::Name::from(kv.key.as_str()),
                        reference_convert(&kv.value, text, depth + 1)?,
                    ))
                })
                .collect::<Result<_, CompileError>>()?,
        ),
        Ast::Expref { .. } => return Err(CompileError::MisplacedExpref),
        Ast::Function { name, args, .. } => {
            let function = crate::kyverno::signature(name)
                .map(Function::Kyverno)
                .or_else(|| crate::functions::signature(name).map(Function::Standard))
                .ok_or_else(|| CompileError::UnknownFunction(name.clone()))?;
            let signature = function.signature();
            check_arity(signature, args.len())?;
            let args = args
                .iter()
                .map(|a| match a {
                    Ast::Expref { ast, .. } => Ok(Node::Expref(sub(ast)?)),
                    other => reference_convert(other, text, depth + 1),
                })
                .collect::<Result<_, _>>()?;
            Node::Function(function, args)
        }
    })
}

/// The crate's `Debug` of a literal token differs from ours; the message
/// names it "a literal" either way.
fn agree(text: &str) -> Result<(), String> {
    let ours = super::parse(&std::rc::Rc::from(text));
    let theirs = reference(text);
    if ours == theirs {
        Ok(())
    } else {
        Err(format!(
            "{text:?}\n  ours:   {ours:?}\n  theirs: {theirs:?}"
        ))
    }
}

const HAND_WRITTEN: &[&str] = &[
    "a", "a.b.c", "a | b", "a || b && !c", "`[1, 2]`", "'raw \\' string'", "\"quoted\".b",
    "a[0]", "a[-1]", "a[1:2]", "a[::2]", "a[:]", "a[::-1].b", "a[*].b", "a[].b[].c", "a.*.b",
    "*", "[*]", "[]", "@", "a[?b == 'c'].d", "a[?b > `1` && c <= `2`] | [0]", "{x: a, y: b.c}",
    "[a, b]", "a.[b, c]", "a.{x: b}", "length(a)", "sort_by(a, &b)", "max_by(a, &b.c)",
    "map(&a, b)", "to_string(@)", "a.b | c[0].d", "!a", "!(a || b)", "(a)", "a.\"b c\"",
    "request.object.spec.[ephemeralContainers, initContainers, containers][].securityContext.capabilities.add[]",
    "element.securityContext.capabilities.drop[] || `[]`", "request.operation || 'BACKGROUND'",
    "request.object.spec.volumes[].keys(@)[] || ''", "a[?contains(b, 'x')]", "a[?!b]",
    "join(',', a[*].b)", "a.b.c.d.e.f.g", "a[0][1][2]", "a[0].b[1:].c", "a.`1`",
    "foo(", "a.", "a[", "a[?", "a[?b", "a[?b]", "{", "{a", "{a:", "{a: b,}", "[a,]", "a b",
    "a..b", "a.[", "a.]", "a.1", "'unclosed", "`unclosed", "\"unclosed", "`{bad json}`",
    "a = b", "a -", "a[-0]", "a[1:2:3:4]", "a[1 2]", "a[x]", "a.(b)", "\"f\"(a)", "&a",
    "a[?b == &c]", "nope(a)", "length(a, b)", "length()", "sort_by(a, b)", "a.{\"k\": b}",
    "a[99999999999]", "a[-2147483648]", "a[2147483647]", "#", "a\n.b", "a\n#", "é", "a.é",
    "-", "-٣", "a || ", "(a", "a)", "a]", "a}", ",", ":", "a:b", "!", "a[*", "a[*]]",
    "`\\`escaped\\``", "a[?b]|[0]", "[?a]", "[0]", "[1:]", "{a: b}.a", "\"\\u0041\"",
    "\"\\q\"", "a[?b == `\"x\"`]", "a.b.\"c\".d", "foo[?bar==`1`].baz[0] | [?x]",
];

#[test]
fn hand_written_expressions_parse_as_the_crate_did() {
    let problems: Vec<String> = HAND_WRITTEN.iter().filter_map(|t| agree(t).err()).collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn conformance_variables_parse_as_the_crate_did() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/conformance/dev.jsonl"
    );
    let Ok(corpus) = std::fs::read_to_string(path) else {
        return;
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut rest = corpus.as_str();
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let text = after[..end].trim().replace("\\\"", "\"");
        seen.insert(text);
        rest = &after[end + 2..];
    }
    assert!(seen.len() > 100, "{} expressions", seen.len());
    let problems: Vec<String> = seen.iter().filter_map(|t| agree(t).err()).collect();
    assert!(
        problems.is_empty(),
        "{} of {}:\n{}",
        problems.len(),
        seen.len(),
        problems.join("\n")
    );
}

#[test]
fn random_token_strings_parse_as_the_crate_did() {
    const PIECES: &[&str] = &[
        "a", "b", "length", "sort_by", "\"q\"", "'r'", "`1`", "`[1]`", "1", "-1", "0", ".", "*",
        "[]", "[?", "[", "]", "{", "}", "(", ")", ",", ":", "|", "||", "&&", "&", "!", "!=", "==",
        "<", "<=", ">", ">=", "@", " ",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut problems = Vec::new();
    for _ in 0..30_000 {
        let len = 1 + next() % 9;
        let text: String = (0..len)
            .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
            .collect();
        if let Err(p) = agree(&text) {
            problems.push(p);
        }
    }
    assert!(
        problems.is_empty(),
        "{} differ:\n{}",
        problems.len(),
        problems
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
