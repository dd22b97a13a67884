//! Kubernetes' CEL environment refuses list and map literals that mix
//! element types (cel-go's `HomogeneousAggregateLiterals` and its
//! `ValidateHomogeneousAggregateLiterals`, which compares the checker's
//! types exactly): `[1, 'a']`, `[1, 2.0]`, `{'a': 1, 'b': 'x'}`. Without
//! declarations only literals have a type the parser knows for sure, so
//! only literals are compared: an element of any other kind (`object.x`,
//! a call) is left alone, which refuses no expression Kubernetes accepts.
//! Literals inside `format()` arguments are exempt, as cel-go's strings
//! extension exempts them.

use std::fmt;

use crate::ast::{word, Node, NodeId, Words};
use crate::value::Type;

/// How deep nested literals are typed; deeper ones count as unknown.
const MAX_NESTING: usize = 32;

/// The type cel-go's checker gives a literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LiteralType {
    /// `null`, a boolean, a number, a string or bytes.
    Scalar(Type),
    List(Box<LiteralType>),
    Map(Box<LiteralType>, Box<LiteralType>),
}

impl fmt::Display for LiteralType {
    /// As cel-go's `FormatCELType` writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Scalar(t) => f.write_str(t.name()),
            Self::List(item) => write!(f, "list({item})"),
            Self::Map(key, value) => write!(f, "map({key}, {value})"),
        }
    }
}

/// Two literals of different types in one aggregate: what cel-go reports
/// (`expected type 'int' but found 'string'`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mismatch {
    pub(crate) expected: LiteralType,
    pub(crate) found: LiteralType,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "expected type '{}' but found '{}'",
            self.expected, self.found
        )
    }
}

/// The first mismatch among a list literal's elements (optional entries
/// aside, whose type is an optional's).
pub(crate) fn list_mismatch(nodes: &[Node], words: Words) -> Option<Mismatch> {
    let elements = list_entries(nodes, words).filter(|(_, optional)| !optional);
    mismatch(nodes, elements.map(|(id, _)| id))
}

/// The first mismatch among a map literal's keys, else among its values
/// (optional entries aside).
pub(crate) fn map_mismatch(nodes: &[Node], words: Words) -> Option<Mismatch> {
    let entries = || map_entries(nodes, words).filter(|(_, _, optional)| !optional);
    mismatch(nodes, entries().map(|(key, _, _)| key))
        .or_else(|| mismatch(nodes, entries().map(|(_, value, _)| value)))
}

/// A list literal's elements, each with whether it is an optional entry
/// (`?x`): two words each.
fn list_entries(nodes: &[Node], words: Words) -> impl Iterator<Item = (NodeId, bool)> + '_ {
    (0..words.len as usize / 2).filter_map(move |i| {
        Some((
            word(nodes, words, 2 * i)?,
            word(nodes, words, 2 * i + 1)? != 0,
        ))
    })
}

/// A map literal's entries: key, value and whether it is optional, three
/// words each.
fn map_entries(nodes: &[Node], words: Words) -> impl Iterator<Item = (NodeId, NodeId, bool)> + '_ {
    (0..words.len as usize / 3).filter_map(move |i| {
        Some((
            word(nodes, words, 3 * i)?,
            word(nodes, words, 3 * i + 1)?,
            word(nodes, words, 3 * i + 2)? != 0,
        ))
    })
}

/// The first mismatch among `items`: the types of the literals among
/// them, in order.
fn mismatch(nodes: &[Node], items: impl IntoIterator<Item = NodeId>) -> Option<Mismatch> {
    let mut first: Option<LiteralType> = None;
    for item in items {
        let Some(found) = literal_type(nodes, item, 0) else {
            continue;
        };
        match &first {
            None => first = Some(found),
            Some(expected) if *expected != found => {
                return Some(Mismatch {
                    expected: expected.clone(),
                    found,
                })
            }
            Some(_) => {}
        }
    }
    None
}

/// The kinds of a list literal's elements, for cel-go's check of a
/// `format()` call's arguments: a literal's type name (`list` and `map` for
/// aggregates, whatever they hold), `None` for an element only the
/// evaluation can type. `None` for a list with optional entries.
pub(crate) fn element_kinds(nodes: &[Node], words: Words) -> Option<Vec<Option<&'static str>>> {
    let mut kinds = Vec::new();
    for (id, optional) in list_entries(nodes, words) {
        if optional {
            return None;
        }
        let kind = match nodes.get(id as usize) {
            Some(Node::List(_)) => Some("list"),
            Some(Node::Map(_)) => Some("map"),
            _ => match literal_type(nodes, id, 0) {
                Some(LiteralType::Scalar(t)) => Some(t.name()),
                _ => None,
            },
        };
        kinds.push(kind);
    }
    Some(kinds)
}

/// The type of node `id` when it is a literal, or a list or map literal
/// whose elements are literals of one type; `None` otherwise. An empty
/// list or map takes its element type from its neighbours in cel-go, so
/// it has none here.
fn literal_type(nodes: &[Node], id: NodeId, depth: usize) -> Option<LiteralType> {
    if depth > MAX_NESTING {
        return None;
    }
    let scalar = LiteralType::Scalar;
    let ty = match nodes.get(id as usize)? {
        Node::Null => scalar(Type::Null),
        Node::Bool(_) => scalar(Type::Bool),
        Node::Int(_) => scalar(Type::Int),
        Node::Uint(_) => scalar(Type::Uint),
        Node::Double(_) => scalar(Type::Double),
        Node::String(_) => scalar(Type::String),
        Node::Bytes(_) => scalar(Type::Bytes),
        Node::Neg(operand) => match literal_type(nodes, *operand, depth + 1)? {
            t @ LiteralType::Scalar(Type::Int | Type::Double) => t,
            _ => return None,
        },
        Node::List(words) => {
            if list_entries(nodes, *words).any(|(_, optional)| optional) {
                return None;
            }
            let item = uniform(nodes, list_entries(nodes, *words).map(|(id, _)| id), depth)?;
            LiteralType::List(Box::new(item))
        }
        Node::Map(words) => {
            if map_entries(nodes, *words).any(|(_, _, optional)| optional) {
                return None;
            }
            let keys = map_entries(nodes, *words).map(|(key, _, _)| key);
            let values = map_entries(nodes, *words).map(|(_, value, _)| value);
            let key = uniform(nodes, keys, depth)?;
            let value = uniform(nodes, values, depth)?;
            LiteralType::Map(Box::new(key), Box::new(value))
        }
        _ => return None,
    };
    Some(ty)
}

/// The one type of `items`, when every one is a literal of it.
fn uniform(
    nodes: &[Node],
    items: impl Iterator<Item = NodeId>,
    depth: usize,
) -> Option<LiteralType> {
    let mut ty: Option<LiteralType> = None;
    for item in items {
        let found = literal_type(nodes, item, depth + 1)?;
        match &ty {
            None => ty = Some(found),
            Some(t) if *t != found => return None,
            Some(_) => {}
        }
    }
    ty
}

#[cfg(test)]
mod tests {
    /// Kubernetes' CEL environment on aggregate literals: the compile error,
    /// or `None` where it accepts the expression.
    #[test]
    fn literals_of_mixed_types_do_not_compile() {
        let cases = [
            (
                "int_and_string",
                "[1, 'a'] == []",
                Some("at line 1, column 1: expected type 'int' but found 'string'"),
            ),
            (
                "int_and_double",
                "[1, 2.0].size() > 0",
                Some("expected type 'int' but found 'double'"),
            ),
            (
                "int_and_uint",
                "[1, 1u].size() > 0",
                Some("expected type 'int' but found 'uint'"),
            ),
            (
                "int_and_null",
                "[1, null].size() > 0",
                Some("expected type 'int' but found 'null_type'"),
            ),
            (
                "nested_lists",
                "[[1], ['a']].size() > 0",
                Some("expected type 'list(int)' but found 'list(string)'"),
            ),
            (
                "nested_maps",
                "[{'a': 1}, {'b': 'x'}].size() > 0",
                Some("expected type 'map(string, int)' but found 'map(string, string)'"),
            ),
            (
                "map_values",
                "{'a': 1, 'b': 'x'}.size() > 0",
                Some("expected type 'int' but found 'string'"),
            ),
            (
                "map_keys",
                "{'a': 1, 2: 1}.size() > 0",
                Some("expected type 'string' but found 'int'"),
            ),
            (
                "inside_another_call",
                "size([true, 'a']) > 0",
                Some("expected type 'bool' but found 'string'"),
            ),
            ("negative_numbers", "[-1, 2, -3].size() > 0", None),
            ("one_type", "['a', 'b'].exists(x, x == 'a')", None),
            ("maps_of_one_type", "[{'a': 1}, {'b': 2}].size() > 0", None),
            ("empty_beside_typed", "[[], [1]].size() > 0", None),
            (
                "fields_are_not_typed_here",
                "[object.x, 'a'].size() > 0",
                None,
            ),
            (
                "format_arguments_are_exempt",
                "'%s %d'.format(['a', 1]) == 'a 1'",
                None,
            ),
            (
                "nested_in_format_arguments",
                "'%s'.format([[1, 'a']]) != ''",
                None,
            ),
            (
                "after_a_format_call",
                "'%s'.format(['a']) == 'a' && [1, 'a'].size() > 0",
                Some("expected type 'int' but found 'string'"),
            ),
        ];
        crate::test_support::assert_compiles(&cases);
    }
}
