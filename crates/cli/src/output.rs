//! What the CLI prints: manifests on stdout, `error:` and `warning:` lines
//! on stderr, with coloured prefixes only when stderr is a terminal.

use std::io::{IsTerminal, Write};

use anyhow::{Context, Result};
use clap::ValueEnum;
use serde_yaml::Value;

/// The format manifests are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Format {
    /// YAML documents separated by `---`.
    #[default]
    Yaml,
    /// One JSON array.
    Json,
}

/// The manifests as one text in `format`, ending with a newline.
pub fn render(manifests: &[Value], format: Format) -> Result<String> {
    match format {
        Format::Yaml => {
            let mut out = String::new();
            for (i, manifest) in manifests.iter().enumerate() {
                if i > 0 {
                    out.push_str("---\n");
                }
                out.push_str(&serde_yaml::to_string(manifest).context("cannot write YAML")?);
            }
            Ok(out)
        }
        Format::Json => {
            let mut out = serde_json::to_string_pretty(manifests).context("cannot write JSON")?;
            out.push('\n');
            Ok(out)
        }
    }
}

/// Writes `text` to stdout. A closed pipe (`| head`) is not an error.
pub fn print(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to standard output")
        }
        _ => Ok(()),
    }
}

/// How bad a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// `error: message` or `warning: message`, the prefix in bold red or
/// yellow when `colour` is on.
pub fn line(severity: Severity, message: &str, colour: bool) -> String {
    let (word, code) = match severity {
        Severity::Error => ("error", "1;31"),
        Severity::Warning => ("warning", "1;33"),
    };
    if colour {
        format!("\x1b[{code}m{word}:\x1b[0m {message}")
    } else {
        format!("{word}: {message}")
    }
}

/// Whether stderr gets colours: a terminal, and `NO_COLOR` unset.
pub fn stderr_colour() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Whether stdout gets colours: a terminal, and `NO_COLOR` unset.
pub fn stdout_colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Prints one message on stderr.
pub fn report(severity: Severity, message: &str) {
    eprintln!("{}", line(severity, message, stderr_colour()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_plain_unless_coloured() {
        assert_eq!(line(Severity::Error, "bad", false), "error: bad");
        assert_eq!(line(Severity::Warning, "odd", false), "warning: odd");
        assert_eq!(
            line(Severity::Error, "bad", true),
            "\x1b[1;31merror:\x1b[0m bad"
        );
    }

    #[test]
    fn yaml_documents_are_separated_and_json_is_one_array() {
        let manifests: Vec<Value> = vec![
            serde_yaml::from_str("kind: A").unwrap(),
            serde_yaml::from_str("kind: B").unwrap(),
        ];
        assert_eq!(
            render(&manifests, Format::Yaml).unwrap(),
            "kind: A\n---\nkind: B\n"
        );
        assert_eq!(
            render(&manifests, Format::Json).unwrap(),
            "[\n  {\n    \"kind\": \"A\"\n  },\n  {\n    \"kind\": \"B\"\n  }\n]\n"
        );
        assert_eq!(render(&[], Format::Yaml).unwrap(), "");
    }
}
