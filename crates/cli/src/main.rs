//! `kyverno-validate`: command-line tools for running Kyverno validate
//! policies with the kyverno-validate-policy Kubewarden module: `convert`
//! writes Kubewarden manifests, `test` runs Kyverno CLI tests.
//!
//! Exit codes: 0 success, 1 a problem in the input (every problem is
//! reported), 2 a usage error (from clap).
#![deny(unsafe_code)]
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use kyverno_validate::output::{self, Format, Severity};
use kyverno_validate::{convert, input, test};

#[derive(Debug, Parser)]
#[command(
    name = "kyverno-validate",
    version,
    about,
    long_about = None,
    after_help = "Exit status: 0 on success, 1 when the input has problems (all are reported), 2 on a usage error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// One variant per subcommand; each runs in a function of its own that
/// returns the exit code.
#[derive(Debug, Subcommand)]
enum Command {
    /// Write a Kubewarden policy manifest for each Kyverno policy
    ///
    /// A ClusterPolicy becomes a ClusterAdmissionPolicy, a Policy an
    /// AdmissionPolicy in its namespace; each runs the module with the
    /// policy's validate rules as settings, and its webhook rules and
    /// context-aware resources follow from what the rules match and read.
    /// Rules of other types are left out with a warning. The settings are
    /// checked as the module's validate_settings checks them; when any
    /// document has a problem, every problem is reported and nothing is
    /// written.
    Convert(ConvertArgs),
    /// Run Kyverno CLI test files (kyverno-test.yaml) on this engine
    ///
    /// Each test's policies, resources, PolicyExceptions, values file and
    /// user are run as `kyverno test` runs them, and every expected result
    /// is checked. Directories are searched for test files. Exits 1 when a
    /// result differs or a test cannot run.
    Test(TestArgs),
}

#[derive(Debug, Args)]
struct TestArgs {
    /// The test file name looked for in directories
    #[arg(
        short = 'f',
        long,
        value_name = "NAME",
        default_value = "kyverno-test.yaml"
    )]
    file_name: String,
    /// A table for people, or JSON for machines
    #[arg(long, value_enum, default_value_t = TestFormat::Text)]
    output: TestFormat,
    /// Each results table in a format of `kyverno test -o` instead of the
    /// text table (JUnit for CI systems)
    #[arg(
        short = 'o',
        long,
        value_enum,
        value_name = "FORMAT",
        conflicts_with = "output"
    )]
    output_format: Option<test::TableFormat>,
    /// Only the results whose policy, rule and resource match, as in
    /// `kyverno test` (`policy=NAME,rule=NAME,resource=NAME`, wildcards
    /// allowed; a resource other than `*` replaces the ones a result names)
    #[arg(
        short = 't',
        long,
        value_name = "SELECTOR",
        default_value = "policy=*,rule=*,resource=*"
    )]
    test_case_selector: String,
    /// Print no table per test, only the failures after the summary
    #[arg(long)]
    fail_only: bool,
    /// Add each rule's message to the table
    #[arg(long)]
    detailed_results: bool,
    /// Print no colours
    #[arg(long)]
    remove_color: bool,
    /// Fail when no test file is found (without it, as `kyverno test`, that
    /// is said and the run succeeds)
    #[arg(long)]
    require_tests: bool,
    /// Test files, or directories to search
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<std::path::PathBuf>,
}

/// How `test` reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TestFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
struct ConvertArgs {
    /// The module the manifests run (`spec.module`)
    #[arg(long, value_name = "REF", default_value = convert::DEFAULT_MODULE)]
    module: String,
    /// How the manifests are written on stdout
    #[arg(long, value_enum, default_value_t = Format::Yaml)]
    output: Format,
    /// Files of Kyverno policies (multi-document YAML or JSON); `-` reads stdin
    #[arg(value_name = "FILE", required = true)]
    files: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Convert(args) => run_convert(&args),
        Command::Test(args) => run_test(&args),
    };
    result.unwrap_or_else(|e| {
        output::report(Severity::Error, &format!("{e:#}"));
        ExitCode::FAILURE
    })
}

/// Reads, converts and prints; nothing is printed on stdout when any
/// document has an error, so a pipe to `kubectl apply` applies all or none.
fn run_convert(args: &ConvertArgs) -> Result<ExitCode> {
    let mut documents = Vec::new();
    let mut unreadable = 0;
    for source in input::read(&args.files) {
        match source.text {
            Ok(text) => documents.extend(input::split(&source.name, &text)),
            Err(problem) => {
                unreadable += 1;
                output::report(Severity::Error, &format!("{}: {problem}", source.name));
            }
        }
    }
    let options = convert::Options {
        module: args.module.clone(),
    };
    let conversion = convert::convert(&documents, &options);
    for warning in &conversion.warnings {
        output::report(Severity::Warning, &warning.to_string());
    }
    for error in &conversion.errors {
        output::report(Severity::Error, &error.to_string());
    }
    let errors = unreadable + conversion.errors.len();
    if errors > 0 {
        output::report(
            Severity::Error,
            &format!(
                "{errors} problem{} found: no manifest written",
                if errors == 1 { "" } else { "s" }
            ),
        );
        return Ok(ExitCode::FAILURE);
    }
    if conversion.manifests.is_empty() {
        output::report(
            Severity::Warning,
            "the input holds no policy: no manifest written",
        );
    }
    output::print(&output::render(&conversion.manifests, args.output)?)?;
    Ok(ExitCode::SUCCESS)
}

/// Runs every test file found and prints the results.
fn run_test(args: &TestArgs) -> Result<ExitCode> {
    let (selector, problems) = test::Selector::parse(&args.test_case_selector);
    for problem in &problems {
        output::report(Severity::Warning, problem);
    }
    let files = test::discover(&args.paths, &args.file_name)?;
    if files.is_empty() {
        let message = format!("no `{}` found under the given paths", args.file_name);
        if args.require_tests {
            output::report(Severity::Error, &message);
            return Ok(ExitCode::FAILURE);
        }
        output::report(Severity::Warning, &message);
        return Ok(ExitCode::SUCCESS);
    }
    let reports: Vec<test::FileReport> =
        files.iter().map(|f| test::run_file(f, &selector)).collect();
    let options = test::TextOptions {
        colour: output::stdout_colour() && !args.remove_color,
        fail_only: args.fail_only,
        detailed: args.detailed_results,
    };
    // `--output-format` conflicts with `--output`, which stays `text` then.
    let text = match args.output {
        TestFormat::Text => test::render_text(&reports, options, args.output_format),
        TestFormat::Json => format!("{:#}\n", test::render_json(&reports)),
    };
    output::print(&text)?;
    let failed: usize = reports.iter().map(test::FileReport::failed).sum();
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
