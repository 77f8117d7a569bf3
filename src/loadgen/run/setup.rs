//! What a run settles before its first stage: the server's model (`/v1/models`) when
//! `--model` is not given, the prompts of the chosen dataset, and where the result files go.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::opts::{DatasetKind, RunOpts};
use super::prepare::invalid;
use crate::loadgen::client::Client;
use crate::loadgen::conversation::{self, Conversation, Dist, SyntheticSpec};
use crate::loadgen::dataset::{self, Prompt, RandomSpec};
use crate::loadgen::record::FailureKind;
use crate::loadgen::report;
use crate::loadgen::shard::Shard;
use crate::loadgen::tokenizer::Tokenizer;
use crate::loadgen::trace;
use crate::loadgen::{DatasetError, LoadgenError, RequestFailed, SetupError};

/// Prompts, the dataset's name, and for a trace its arrival offsets.
pub(super) struct Loaded {
    /// The dataset's name as recorded (`random`, `sharegpt`, `trace-azure`, …).
    pub(super) name: String,
    /// The prompts, in sending order.
    pub(super) prompts: Vec<Prompt>,
    /// A trace's arrival offsets (scaled by `--trace-speed`), one per prompt.
    pub(super) arrivals: Option<Vec<Duration>>,
    /// `--multi-turn`: the conversations (then `prompts` are their first turns, for the
    /// warm-up) and what made them, as tags.
    pub(super) conversations: Option<Conversations>,
}

/// `--multi-turn`'s conversations and their description for the result file.
pub(super) struct Conversations {
    /// The conversations, in starting order.
    pub(super) list: Vec<Conversation>,
    /// `tag.*` pairs saying how they were made (each stage adds how many it started).
    pub(super) tags: Vec<(String, String)>,
}

/// A distribution option, checked.
fn dist(option: &'static str, text: &str) -> Result<Dist, LoadgenError> {
    text.parse::<Dist>()
        .map_err(|e| invalid(option, e.to_string()))
}

/// `--multi-turn`: `count` conversations of the chosen dataset.
fn load_conversations(
    opts: &RunOpts,
    count: usize,
    tok: &Tokenizer,
    read: impl Fn() -> Result<(PathBuf, String), LoadgenError>,
) -> Result<Loaded, LoadgenError> {
    // Options of the single-prompt generator that conversations do not use: refused rather
    // than silently ignored.
    let unused = [
        ("range-ratio", opts.range_ratio != 0.0),
        ("prefix-len", opts.prefix_len != 0),
        ("prefix-groups", opts.prefix_groups != 1),
    ];
    if let Some((option, _)) = unused.into_iter().find(|(_, given)| *given) {
        return Err(invalid(
            option,
            "not used by --multi-turn (vary turn lengths with --turn-input-len uniform:MIN:MAX)",
        ));
    }
    let think = dist("think-time", &opts.think_time)?;
    let mut tags = vec![("think_time_s".to_string(), think.to_string())];
    let (name, mut list) = match opts.dataset {
        DatasetKind::Random => {
            let or_len =
                |given: &Option<String>, len: u64| given.clone().unwrap_or_else(|| len.to_string());
            let spec = SyntheticSpec {
                turns: dist("turns", &opts.turns)?,
                input_len: dist(
                    "turn-input-len",
                    &or_len(&opts.turn_input_len, opts.input_len),
                )?,
                output_len: dist(
                    "turn-output-len",
                    &or_len(&opts.turn_output_len, opts.output_len.unwrap_or(128)),
                )?,
                think_time_s: think,
            };
            tags.push(("turns".into(), spec.turns.to_string()));
            tags.push(("turn_input_len".into(), spec.input_len.to_string()));
            tags.push(("turn_output_len".into(), spec.output_len.to_string()));
            (
                "random-multi-turn",
                conversation::synthetic(spec, count, opts.seed, tok),
            )
        }
        DatasetKind::Sharegpt => {
            let (path, text) = read()?;
            let mut list = conversation::sharegpt(
                &path,
                &text,
                opts.output_len,
                opts.max_turns,
                think,
                opts.seed,
                tok,
            )?;
            list.truncate(count);
            ("sharegpt-multi-turn", list)
        }
        _ => {
            return Err(invalid(
                "multi-turn",
                "replays --dataset sharegpt or makes synthetic conversations with --dataset random",
            ))
        }
    };
    if let Some(m) = opts.max_turns {
        if m == 0 {
            return Err(invalid("max-turns", "must be at least 1"));
        }
        for c in &mut list {
            c.turns.truncate(m);
        }
        tags.push(("max_turns".into(), m.to_string()));
    }
    // Rate and concurrency apply to conversations, not to each turn.
    tags.push(("arrivals".into(), "conversation_starts".into()));
    let prompts = list
        .iter()
        .map(|c| Prompt {
            text: c.turns[0].text.clone(),
            input_len: c.turns[0].new_input_len,
            output_len: c.turns[0].output_len,
        })
        .collect();
    Ok(Loaded {
        name: name.into(),
        prompts,
        arrivals: None,
        conversations: Some(Conversations { list, tags }),
    })
}

pub(super) fn load_prompts(
    opts: &RunOpts,
    count: usize,
    tok: &Tokenizer,
) -> Result<Loaded, LoadgenError> {
    let read = || -> Result<(PathBuf, String), LoadgenError> {
        let path = opts
            .dataset_path
            .clone()
            .ok_or_else(|| invalid("dataset-path", "needed for this --dataset"))?;
        let text = std::fs::read_to_string(&path).map_err(|e| LoadgenError::Dataset {
            path: path.clone(),
            source: DatasetError::Read(e),
        })?;
        Ok((path, text))
    };
    let listed = |name: &str, prompts| Loaded {
        name: name.into(),
        prompts,
        arrivals: None,
        conversations: None,
    };
    if opts.multi_turn {
        return load_conversations(opts, count, tok, read);
    }
    Ok(match opts.dataset {
        DatasetKind::Random => {
            let spec = RandomSpec {
                input_len: opts.input_len,
                output_len: opts.output_len.unwrap_or(128),
                range_ratio: opts.range_ratio,
                prefix_len: opts.prefix_len,
                prefix_groups: opts.prefix_groups,
                prefix_order: opts.prefix_order,
            };
            listed("random", dataset::random(spec, count, opts.seed, tok))
        }
        DatasetKind::Jsonl => {
            let (path, text) = read()?;
            listed(
                "jsonl",
                dataset::jsonl(&path, &text, opts.output_len.unwrap_or(128), tok)?,
            )
        }
        DatasetKind::Sharegpt => {
            let (path, text) = read()?;
            listed(
                "sharegpt",
                dataset::sharegpt(&path, &text, opts.output_len, tok)?,
            )
        }
        DatasetKind::Trace => {
            let (path, text) = read()?;
            load_trace(opts, &path, &text, count, tok)?
        }
    })
}

/// `--dataset trace`: the sampled requests' prompts and their arrival offsets.
fn load_trace(
    opts: &RunOpts,
    path: &std::path::Path,
    text: &str,
    count: usize,
    tok: &Tokenizer,
) -> Result<Loaded, LoadgenError> {
    if !(opts.trace_speed > 0.0 && opts.trace_speed.is_finite()) {
        return Err(invalid("trace-speed", "must be a positive number"));
    }
    if !(opts.trace_sample > 0.0 && opts.trace_sample <= 1.0) {
        return Err(invalid("trace-sample", "must be above 0 and at most 1"));
    }
    let trace = trace::parse(text).map_err(|e| LoadgenError::Dataset {
        path: path.to_path_buf(),
        source: DatasetError::Trace(e),
    })?;
    let requests = trace::sample(
        &trace,
        trace::Sampling {
            speed: opts.trace_speed,
            share: opts.trace_sample,
            limit: Some(count),
            seed: opts.seed,
        },
    );
    let prompts = dataset::trace_prompts(&requests, trace::MOONCAKE_BLOCK_TOKENS, opts.seed, tok);
    Ok(Loaded {
        name: format!("trace-{}", trace.layout.name()),
        prompts,
        conversations: None,
        arrivals: Some(
            requests
                .iter()
                .map(|r| Duration::from_secs_f64(r.at_s))
                .collect(),
        ),
    })
}

pub(super) async fn first_model(client: &Client) -> Result<String, LoadgenError> {
    let path = format!("{}/v1/models", client.target().prefix);
    let url = format!("{}{path}", client.target().origin);
    let text = client.get(&path).await.map_err(|f| {
        // A server without the route, or whose model list fails on its own (transformers
        // serve 5.19 answers 500 when its Hugging Face cache folder does not exist), is helped
        // by naming the model; a refusal (a rejected header, a bad key: 4xx) would fail every
        // request the same way.
        let hint = match f.kind {
            FailureKind::Http(404) => " (the server lists no models: pass --model)",
            FailureKind::Http(500..=599) => {
                " (the server could not list its models: pass --model to skip the probe)"
            }
            FailureKind::Http(_) => "",
            _ => " (pass --model to skip the probe)",
        };
        LoadgenError::Setup {
            url: url.clone(),
            source: SetupError::ModelProbe {
                hint,
                reason: RequestFailed::from(&f),
            },
        }
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| LoadgenError::Setup {
        url: url.clone(),
        source: SetupError::ModelListNotJson(e),
    })?;
    v.get("data")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        .and_then(|m| m.get("id"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or(LoadgenError::Setup {
            url,
            source: SetupError::NoModelListed,
        })
}

/// Where a run's files go.
pub(super) struct ResultPaths {
    /// The canonical result file; `None` for stdout (`--result-filename -`).
    pub(super) result: Option<PathBuf>,
    /// The per-request JSON Lines beside it (`<stem>.requests.jsonl`).
    pub(super) requests: Option<PathBuf>,
}

/// The default result file name of a run: `benchlens-{backend}-{model}-{date}-{ms}-{run
/// id}.json`, and `-shard{I}of{N}` before `.json` for a shard. Unique to the run: runs started in
/// the same millisecond have different run ids, and shards of one run different indices.
pub(super) fn default_result_name(
    backend: &str,
    model: &str,
    unix_ms: u64,
    run_id: &str,
    shard: Option<Shard>,
) -> String {
    let m = model.rsplit('/').next().unwrap_or(model);
    let shard = shard.map_or_else(String::new, |s| format!("-shard{}of{}", s.index, s.count));
    format!(
        "benchlens-{backend}-{m}-{}-{run_id}{shard}.json",
        report::format_date_ms(unix_ms)
    )
}

/// A short random run id: six hexadecimal digits.
pub(super) fn run_id() -> String {
    format!("{:06x}", rand::random::<u32>() & 0xff_ffff)
}

/// The result file's path (`--result-dir`, `--result-filename` or [`default_result_name`]) and
/// the JSON Lines beside it, with the folder created. Without `--overwrite`, either file
/// existing is refused here, before any load.
pub(super) fn result_paths(opts: &RunOpts, model: &str) -> Result<ResultPaths, LoadgenError> {
    // With --vllm-compatible, --result-filename names the vLLM file, as in vLLM.
    let own_name = opts
        .result_filename
        .clone()
        .filter(|_| !opts.vllm_compatible);
    let file_name = own_name.unwrap_or_else(|| {
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        default_result_name(opts.backend.name(), model, unix_ms, &run_id(), opts.shard)
    });
    let result = (file_name != "-").then(|| opts.result_dir.join(&file_name));
    let requests = result.as_ref().map(|p| {
        let stem = p
            .file_stem()
            .map_or_else(|| "benchlens".into(), |s| s.to_string_lossy().into_owned());
        p.with_file_name(format!("{stem}.requests.jsonl"))
    });
    if let Some(dir) = result
        .as_ref()
        .and_then(|p| p.parent())
        .filter(|d| !d.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir).map_err(|source| LoadgenError::Write {
            path: dir.into(),
            source,
        })?;
    }
    if !opts.overwrite && opts.write_files {
        if let Some(p) = result.iter().chain(&requests).find(|p| p.exists()) {
            return Err(LoadgenError::Exists { path: p.clone() });
        }
    }
    Ok(ResultPaths { result, requests })
}

/// Bytes a request's rows take in the result files, about: its JSON Lines row and its detail
/// in the canonical file, each a fixed part ...
const REQUEST_BYTES: u64 = 1536;
/// ... and its token chunks, about 24 bytes each in either file.
const CHUNK_BYTES: u64 = 48;

/// About how many bytes of result files a run of `requests` requests of `output_len` tokens
/// each writes: what the folder must have room for before the load starts.
pub(super) fn planned_bytes(requests: u64, output_len: u64) -> u64 {
    requests.saturating_mul(REQUEST_BYTES.saturating_add(CHUNK_BYTES.saturating_mul(output_len)))
}

/// The requests a run plans: `--num-prompts` per stage, or with `--duration` the rate times
/// the duration (a stage at an unbounded rate counts `--num-prompts`, its usual size).
pub(super) fn planned_requests(opts: &RunOpts, rates: &[f64], stages_per_rate: usize) -> u64 {
    let per_rate = |rate: f64| match opts.duration {
        Some(d) if rate.is_finite() => (rate * d).ceil().max(0.0) as u64,
        _ => opts.num_prompts,
    };
    let all = rates
        .iter()
        .map(|&r| per_rate(r).saturating_mul(stages_per_rate as u64))
        .fold(0u64, u64::saturating_add);
    // A shard sends its share.
    opts.shard
        .map_or(all, |s| all.div_ceil(s.count.max(1) as u64))
}

/// Bytes, shown to a person.
fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KB", "MB", "GB", "TB"];
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1000.0 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{b} bytes")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Whether a folder with `free` bytes (when known) has room for `need`: the reason if not.
pub(super) fn room_for(free: Option<u64>, need: u64) -> Result<(), String> {
    match free {
        Some(free) if free < need => Err(format!(
            "not enough room: {} free, the planned run's files need about {} (free some, choose another --result-dir, or plan fewer requests)",
            human_bytes(free),
            human_bytes(need)
        )),
        _ => Ok(()),
    }
}

/// Bytes an unprivileged writer may still use on the file system holding `dir` (statvfs).
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statvfs is a valid out-parameter; `c` is a NUL-terminated path that
    // lives through the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    (rc == 0).then(|| (st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Checks, before any load, that the result folder takes files (a small file is written and
/// removed) and has room for `need` bytes.
pub(super) fn check_folder(dir: &Path, need: u64) -> Result<(), LoadgenError> {
    let shown = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let probe = shown.join(format!(".benchlens-write-check-{}", run_id()));
    let wrote = std::fs::write(&probe, b"benchlens\n");
    let _ = std::fs::remove_file(&probe);
    wrote.map_err(|source| LoadgenError::Write {
        path: shown.into(),
        source,
    })?;
    room_for(free_bytes(shown), need).map_err(|why| LoadgenError::Write {
        path: shown.into(),
        source: std::io::Error::new(std::io::ErrorKind::StorageFull, why),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_must_take_files_and_have_room_for_the_plan() {
        // 1,000 requests of 128 tokens: about 7.7 MB.
        let need = planned_bytes(1000, 128);
        assert_eq!(need, 1000 * (1536 + 48 * 128));
        assert_eq!(room_for(Some(need), need), Ok(()));
        assert_eq!(room_for(None, need), Ok(()));
        let why = room_for(Some(3_000_000), need).unwrap_err();
        assert!(
            why.contains("3.0 MB free") && why.contains("about 7.7 MB"),
            "{why}"
        );
        assert_eq!(planned_bytes(u64::MAX, 128), u64::MAX);
        let opts = RunOpts {
            num_prompts: 100,
            ..RunOpts::default()
        };
        assert_eq!(planned_requests(&opts, &[1.0, f64::INFINITY], 2), 400);
        let timed = RunOpts {
            duration: Some(10.0),
            ..opts
        };
        assert_eq!(planned_requests(&timed, &[2.5, f64::INFINITY], 1), 25 + 100);
        // A folder that takes files, and one that is no folder.
        let dir = tempfile::tempdir().unwrap();
        check_folder(dir.path(), 1).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let e = check_folder(&file, 1).unwrap_err();
        assert!(e.to_string().contains("cannot write"), "{e}");
        let e = check_folder(dir.path(), u64::MAX).unwrap_err();
        let chain = format!("{e}: {}", std::error::Error::source(&e).unwrap());
        assert!(chain.contains("not enough room"), "{chain}");
    }

    #[test]
    fn default_names_carry_milliseconds_run_id_and_shard() {
        let t = 1_709_210_096_007;
        assert_eq!(
            default_result_name("openai", "org/m", t, "a1b2c3", None),
            "benchlens-openai-m-20240229-123456-007-a1b2c3.json"
        );
        let shard = Some(Shard { index: 2, count: 4 });
        assert_eq!(
            default_result_name("openai", "m", t, "a1b2c3", shard),
            "benchlens-openai-m-20240229-123456-007-a1b2c3-shard2of4.json"
        );
        let id = run_id();
        assert!(
            id.len() == 6 && id.chars().all(|c| c.is_ascii_hexdigit()),
            "{id}"
        );
        // Two runs in one millisecond: told apart by the run id (a collision of 2^-24).
        let ids: std::collections::BTreeSet<String> = (0..64).map(|_| run_id()).collect();
        assert!(ids.len() > 60);
    }
}
