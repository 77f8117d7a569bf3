//! The native command line: argument parsing and dispatch to the subcommands.
//!
//! Owns argument definitions (clap derive), the process exit code and the one way errors are
//! printed ([`error::print_error`]: `error: top: cause: deeper cause`, one line per error, the
//! same for every subcommand); the work itself lives in the shared modules ([`crate::ingest`],
//! [`crate::model`]) and the native-only ones. Never compiled for wasm32.
//!
//! The exit codes are listed at the end of `--help` (`ERRORS_AND_EXIT_CODES`).

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod compare;
pub mod compare_args;
mod compare_at;
pub mod convert;
pub mod error;
pub mod input;
pub mod inspect;
pub mod inspect_requests;
pub mod results_dir;
pub mod site;
pub mod trend;
pub mod vllm_flags;

/// How errors are printed and what the exit codes mean, shown at the end of `--help`.
const ERRORS_AND_EXIT_CODES: &str =
    "Errors are one line on stderr each: `error: ` then what failed and each cause after `: `.
Exit codes: 0 success; 1 an unreadable input (convert, inspect), a regression beyond
--fail-on-regression (compare), a configuration whose latest point is at a regressed
level (compare --trend), a failed or unusable run, a mock that cannot serve; 2 bad
arguments (compare: also unreadable files, no dated results or nothing to compare;
convert: an unwritable output; site: no explorer build or an unwritable output);
130 an interrupted run. A run ended by SIGTERM exits 143, by SIGHUP 129.";

/// `compare`'s exit codes, shown at the end of `benchlens compare --help`.
const COMPARE_EXIT_CODES: &str = "Exit codes: 0 success (no regression); 1 a regression beyond
--fail-on-regression (OLD NEW), or with --trend a configuration whose latest point is at a
regressed level; 2 bad arguments, unreadable files, no dated results or nothing to compare.";

/// benchlens: explore and produce LLM inference benchmark results.
#[derive(Debug, Parser)]
#[command(name = "benchlens", version = crate::VERSION_TEXT, about, long_about = None, after_help = ERRORS_AND_EXIT_CODES)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Convert result files of any supported format into canonical JSON or CSV.
    Convert(convert::ConvertArgs),
    /// Compare two values of a dimension (improvement %) or two runs (regression check), or
    /// follow a folder of results over time (`--trend DIR`).
    #[command(after_help = COMPARE_EXIT_CODES)]
    Compare(compare_args::CompareArgs),
    /// Show what each result file holds: format, records, dimensions, metrics, warnings.
    Inspect(inspect::InspectArgs),
    /// Write a static site: the explorer, the result files under DIR and their index,
    /// opening on the trends view (for GitHub Pages).
    Site(site::SiteArgs),
    /// Benchmark an inference server (or the built-in mock with `--mock`).
    Run(Box<crate::loadgen::RunOpts>),
    /// Serve the OpenAI-compatible mock inference server.
    Mock(crate::loadgen::MockOpts),
    /// Join the result files of a sharded run (`run --shard I/N`) into one run, every figure
    /// computed again from all the requests.
    Merge(crate::loadgen::merge::MergeArgs),
    /// Find the highest load a server carries within SLOs (`--goodput p99_ttft:500 …`):
    /// brackets, then bisects the request rate (or concurrency), one probe per stage.
    Sweep(Box<crate::loadgen::SweepOpts>),
}

/// Parses the process arguments and runs the chosen subcommand.
pub fn main() -> ExitCode {
    let args = match vllm_flags::translate(std::env::args_os().collect(), &run_flag_names()) {
        Ok(a) => a,
        Err(e) => {
            error::print_error(&e);
            return ExitCode::from(2);
        }
    };
    let cli = Cli::parse_from(args);
    match cli.command {
        None => {
            use clap::CommandFactory;
            let _ = Cli::command().print_help();
            ExitCode::SUCCESS
        }
        Some(command) => match command {
            Command::Convert(args) => exit_code(convert::run(&args)),
            Command::Inspect(args) => inspect::run(&args),
            Command::Compare(args) => exit_code(compare::run(&args)),
            Command::Site(args) => exit_code(site::run(&args)),
            Command::Run(opts) => run_async(async move {
                without_huge_pages();
                let fail_on_error = opts.fail_on_error;
                let outcome = crate::loadgen::run(*opts).await?;
                Ok(run_exit_code(&outcome, fail_on_error))
            }),
            Command::Merge(args) => match crate::loadgen::merge::run_merge(&args) {
                Ok(merged) => {
                    for w in &merged.warnings {
                        eprintln!("warning: {w}");
                    }
                    crate::stdout::println(&format!(
                        "merged {} files: {} stage(s), {} requests, into {}",
                        args.files.len(),
                        merged.stages,
                        merged.requests,
                        args.output.display()
                    ));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    error::print_error(&e);
                    ExitCode::FAILURE
                }
            },
            Command::Sweep(opts) => run_async(async move {
                without_huge_pages();
                let outcome = crate::loadgen::sweep::sweep_until_ctrl_c(*opts).await?;
                Ok(if outcome.interrupted {
                    ExitCode::from(outcome.signal.map_or(130, |s| s.exit_code()))
                } else if outcome.capacity.is_none() {
                    eprintln!("error: the search ended without a capacity (see --max-probes)");
                    ExitCode::FAILURE
                } else {
                    ExitCode::SUCCESS
                })
            }),
            Command::Mock(opts) => run_async(async move {
                crate::loadgen::mock::serve_until_ctrl_c(opts).await?;
                Ok(ExitCode::SUCCESS)
            }),
        },
    }
}

/// The exit code of a subcommand's result, printing its error if it failed.
fn exit_code(result: Result<ExitCode, error::CliError>) -> ExitCode {
    result.unwrap_or_else(|e| {
        error::print_error(&e);
        e.exit_code()
    })
}

/// Long names and aliases of `benchlens run`'s options.
fn run_flag_names() -> Vec<String> {
    use clap::CommandFactory;
    let cli = Cli::command();
    let Some(run) = cli.find_subcommand("run") else {
        return Vec::new();
    };
    run.get_arguments()
        .flat_map(|a| {
            a.get_long()
                .into_iter()
                .chain(a.get_all_aliases().unwrap_or_default())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `run`'s exit code: the signal's when interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP), 1
/// when no request succeeded or more failed than `--fail-on-error` allows (without it, more
/// than half of the run's requests; the reason goes to stderr), else 0.
fn run_exit_code(outcome: &crate::loadgen::RunOutcome, fail_on_error: Option<f64>) -> ExitCode {
    if outcome.partial {
        return ExitCode::from(outcome.interrupt.map_or(130, |s| s.exit_code()));
    }
    if !outcome.write_failures.is_empty() {
        eprintln!(
            "error: {} file(s) could not be written where asked; what was measured is where the messages above say",
            outcome.write_failures.len()
        );
        return ExitCode::FAILURE;
    }
    match outcome.failure_verdict(fail_on_error) {
        Some(why) => {
            eprintln!("error: {why}");
            ExitCode::FAILURE
        }
        None => ExitCode::SUCCESS,
    }
}

/// Keeps the load generator's process to the kernel's small pages. With transparent huge pages
/// set to `always` (the default of many Linux distributions), each 2 MiB stretch of the
/// allocator's arena that a run touched became resident whole: tens of megabytes of a `run`'s
/// peak that were never in use. `inspect` and `convert` keep huge pages for their large tables.
fn without_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and sets a flag of this process;
    // a kernel without it returns an error, which changes nothing.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// Runs a native subcommand on a multi-threaded tokio runtime; errors print as every other
/// subcommand's do ([`error::print_error`]).
fn run_async(fut: impl std::future::Future<Output = anyhow::Result<ExitCode>>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let e = anyhow::Error::new(e).context("cannot start the async runtime");
            error::print_error(e.as_ref());
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(fut) {
        Ok(code) => code,
        Err(e) => {
            let e: &(dyn std::error::Error + 'static) = e.as_ref();
            error::print_error(e);
            ExitCode::FAILURE
        }
    }
}
