//! Reading policies: files, or standard input for `-`, split into YAML
//! documents that keep their file name and position for messages.

use std::io::Read;

use serde::Deserialize;
use serde_yaml::Value;

/// The argument that stands for standard input.
pub const STDIN_ARG: &str = "-";
/// How messages name standard input.
pub const STDIN_NAME: &str = "<stdin>";

/// One YAML document of an input.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The file as given on the command line, or [`STDIN_NAME`].
    pub source: String,
    /// 1-based position in its file, counting empty documents too.
    pub index: usize,
    /// The document, or why it is not YAML.
    pub content: Result<Value, String>,
}

/// An input as read: its name, and its text or why it could not be read.
#[derive(Debug)]
pub struct Source {
    pub name: String,
    pub text: Result<String, String>,
}

/// Reads every path (`-` is standard input), in order.
pub fn read(paths: &[String]) -> Vec<Source> {
    paths
        .iter()
        .map(|path| {
            if path == STDIN_ARG {
                let mut text = String::new();
                let read = std::io::stdin()
                    .read_to_string(&mut text)
                    .map(|_| text)
                    .map_err(|e| format!("cannot read standard input: {e}"));
                Source {
                    name: STDIN_NAME.to_string(),
                    text: read,
                }
            } else {
                Source {
                    name: path.clone(),
                    text: std::fs::read_to_string(path).map_err(|e| format!("cannot read it: {e}")),
                }
            }
        })
        .collect()
}

/// Splits a multi-document YAML text. A syntax error ends the file: the
/// parser cannot tell where the next document would start.
pub fn split(source: &str, text: &str) -> Vec<Document> {
    let mut documents = Vec::new();
    for (i, deserializer) in serde_yaml::Deserializer::from_str(text).enumerate() {
        // Merge keys (`<<: *defaults`) are YAML 1.1; Kubernetes tools apply them.
        let content = Value::deserialize(deserializer)
            .and_then(|mut value| value.apply_merge().map(|()| value))
            .map_err(|e| format!("not YAML: {e}"));
        let failed = content.is_err();
        documents.push(Document {
            source: source.to_string(),
            index: i + 1,
            content,
        });
        if failed {
            break;
        }
    }
    documents
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(text: &str) -> Vec<Result<Value, String>> {
        split("f.yaml", text)
            .into_iter()
            .map(|document| {
                assert_eq!(document.source, "f.yaml");
                document.content
            })
            .collect()
    }

    #[test]
    fn documents_keep_their_positions() {
        let documents = split("f.yaml", "a: 1\n---\n---\nb: 2\n");
        let indexes: Vec<usize> = documents.iter().map(|d| d.index).collect();
        assert_eq!(indexes, [1, 2, 3]);
        assert_eq!(
            documents[2].content,
            Ok(serde_yaml::from_str("b: 2").unwrap())
        );
    }

    #[test]
    fn empty_documents_are_null() {
        assert_eq!(
            contents("---\n# only a comment\n---\n"),
            [Ok(Value::Null), Ok(Value::Null)]
        );
        assert_eq!(contents(""), [Ok(Value::Null)]);
    }

    #[test]
    fn a_syntax_error_ends_the_file_with_its_position() {
        let found = contents("a: 1\n---\nb: [1, 2\n---\nc: 3\n");
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].is_ok());
        let error = found[1].as_ref().unwrap_err();
        assert!(error.starts_with("not YAML: "), "{error}");
        assert!(error.contains("line"), "{error}");
    }

    #[test]
    fn merge_keys_are_applied() {
        let text = "base: &base {kinds: [Pod]}\nmatch:\n  <<: *base\n  names: [web]\n";
        assert_eq!(
            contents(text),
            [Ok(serde_yaml::from_str(
                "base: {kinds: [Pod]}\nmatch: {names: [web], kinds: [Pod]}"
            )
            .unwrap())]
        );
    }

    #[test]
    fn json_is_yaml() {
        assert_eq!(
            contents(r#"{"kind": "ClusterPolicy"}"#),
            [Ok(serde_yaml::from_str("kind: ClusterPolicy").unwrap())]
        );
    }
}
