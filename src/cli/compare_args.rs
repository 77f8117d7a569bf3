//! `benchlens compare`'s options and its table output, shared by its modes (improvement and
//! regression in [`super::compare`], frontiers at a target in [`super::compare_at`], trends
//! in [`super::trend`]).

use clap::{Args, ValueEnum};

use crate::analysis::defaults::default_compare_metric;
use crate::analysis::export::TextTable;
use crate::model::{MetricKey, Record};

/// How tables are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TableFormat {
    /// GitHub-flavoured Markdown, ready to paste into a pull request.
    Markdown,
    /// CSV with canonical column ids.
    Csv,
    /// JSON: the table's rows plus what was compared and what did not match.
    Json,
}

/// Arguments of `benchlens compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Result files (`-` reads stdin). With `--by`: any number, all compared together;
    /// without: exactly two, OLD then NEW. None with `--trend`.
    #[arg(required_unless_present = "trend", conflicts_with = "trend")]
    pub files: Vec<String>,
    /// Trend check for CI: every result file under DIR (recursively; .json, .jsonl, .csv,
    /// .tsv, .txt) is one history ordered by each record's date. Prints the configurations
    /// whose latest point is at a regressed level (a change beyond the run-to-run noise
    /// measured from the data) and exits 1 when there is one.
    #[arg(long, value_name = "DIR")]
    pub trend: Option<std::path::PathBuf>,
    /// Trend check: a change point is a shift whose size over its standard error exceeds
    /// this many noise units.
    #[arg(long, value_name = "SIGMA", default_value_t = crate::analysis::trend::DEFAULT_THRESHOLD_SIGMA)]
    pub noise_threshold: f64,
    /// The dimension whose two values are compared (`gpu`, `engine`, `tag.node`).
    #[arg(long)]
    pub by: Option<String>,
    /// The baseline value of `--by` (`Tesla`).
    #[arg(long)]
    pub baseline: Option<String>,
    /// The candidate value of `--by` (`A100`).
    #[arg(long)]
    pub candidate: Option<String>,
    /// The metric to compare (canonical name); default: the first present of
    /// output_throughput, total_token_throughput, request_throughput, then any other
    /// throughput (extra.throughput), then any higher-is-better metric, then any metric.
    /// With `--trend` it may be repeated, or `all` for every metric.
    #[arg(long)]
    pub metric: Vec<String>,
    /// Leave a dimension out of the match key (repeatable). source, format, date and label
    /// are always left out.
    #[arg(long = "ignore", value_name = "DIM")]
    pub ignore: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: TableFormat,
    /// Regression check: report changes larger than this, in %.
    #[arg(long, default_value_t = crate::analysis::regression::DEFAULT_THRESHOLD_PCT)]
    pub threshold: f64,
    /// Regression check: exit 1 when any matched metric got worse by more than this, in %.
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
    /// Read every series' frontier at this many tokens per second per user (1000 / mean
    /// TPOT): the output throughput (per GPU with `--per-gpu`) and the cost per million output
    /// tokens there, interpolated between measured frontier points, never extrapolated. The
    /// series are the values of `--by` (default: the series the explorer would draw).
    #[arg(long, value_name = "TOK_S", conflicts_with_all = ["trend", "baseline", "candidate", "fail_on_regression"])]
    pub at_interactivity: Option<f64>,
    /// Throughput per GPU (each record's gpu_count, else tp × pp × dp): with `--at-interactivity`
    /// the frontier's throughput; in an improvement table the compared metric, which must then
    /// be a throughput (default `output_throughput`). Records without a GPU count are left
    /// out, and the output says how many.
    #[arg(long, conflicts_with_all = ["trend", "fail_on_regression"])]
    pub per_gpu: bool,
    /// With `--at-interactivity`: a price per GPU-hour in US dollars for a GPU name or family
    /// (`H100=2.95`; repeatable or comma-separated); GPUs not given use the defaults that
    /// docs/economics.md cites, and the output names every price it used.
    #[arg(long, value_name = "GPU=USD", requires = "at_interactivity")]
    pub price: Vec<String>,
    /// Also print each file's ingest warnings on stderr.
    #[arg(short, long)]
    pub verbose: bool,
}

/// Picks the metric to compare when none is given, as the explorer does
/// ([`crate::analysis::defaults::default_compare_metric`]).
pub fn default_metric(records: &[Record]) -> Option<MetricKey> {
    let present: std::collections::BTreeSet<&MetricKey> =
        records.iter().flat_map(|r| r.metrics.keys()).collect();
    let present: Vec<MetricKey> = present.into_iter().cloned().collect();
    default_compare_metric(&present)
}

pub(crate) fn render(table: &TextTable, format: TableFormat, meta: serde_json::Value) -> String {
    match format {
        TableFormat::Markdown => table.to_markdown(),
        TableFormat::Csv => table.to_csv(),
        TableFormat::Json => {
            let mut obj = match meta {
                serde_json::Value::Object(o) => o,
                _ => serde_json::Map::new(),
            };
            obj.insert("rows".into(), table.to_json());
            let mut s =
                serde_json::to_string_pretty(&serde_json::Value::Object(obj)).unwrap_or_default();
            s.push('\n');
            s
        }
    }
}
