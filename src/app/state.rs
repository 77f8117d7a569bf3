//! The explorer's reactive state: loaded files, the dataset built from them, the filter and the
//! chart choices. Components receive [`AppState`] through context.

use std::ops::Range;
use std::sync::Arc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::browser::yield_to_browser;
use crate::analysis::defaults::default_view;
use crate::analysis::quality::file_notes;
use crate::charts::Theme;
use crate::model::{provenance, Dataset, DimKey, Facet, Filter, FilterPass, Index, Record};
use crate::share::ViewState;
use crate::views::chart::{chart_contents_cached, ChartChoice, ChartContents, LayoutCache};
use crate::views::improvement::ImproveChoice;

/// Where a file came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// Picked, dropped or pasted by the user.
    Local,
    /// Fetched from this address (kept in shared links).
    Url(String),
    /// One of the bundled samples.
    Sample(String),
    /// Fetched from this address because an index file listed it (links keep the index).
    Listed(String),
}

/// A file in the file list.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedFile {
    /// Stable id for list keys and removal.
    pub id: u32,
    /// File name (or URL's last segment).
    pub name: String,
    /// Where it came from.
    pub origin: Origin,
    /// Its state.
    pub status: FileStatus,
    /// Bumped on every status change, so the file list redraws a row exactly when it changed.
    pub revision: u32,
}

/// What happened to a file.
#[derive(Clone, Debug, PartialEq)]
pub enum FileStatus {
    /// Being fetched, read or parsed; the text says which.
    Loading(String),
    /// Read.
    Loaded {
        /// Human name of the detected format.
        format: String,
        /// Where its records sit in the dataset.
        rows: Range<usize>,
        /// Warnings from the reader.
        warnings: Vec<String>,
        /// A note such as "no records: this is a template".
        note: Option<String>,
        /// The benchlens build(s) that wrote the file's records, when they say
        /// ([`provenance::written_by`]).
        written_by: Option<String>,
        /// What to know before trusting its numbers ([`file_notes`]).
        notes: Vec<String>,
    },
    /// Could not be read; the message says why and what to do.
    Failed(String),
}

pub use crate::analysis::defaults::View;

/// Whether the view was picked by the user or a link (`false`: it follows the data).
#[derive(Clone, Copy)]
pub struct ViewPinned(pub RwSignal<bool>);

/// Everything the components share.
#[derive(Clone, Copy)]
pub struct AppState {
    /// Loaded (and loading, and failed) files, in load order.
    pub files: RwSignal<Vec<LoadedFile>>,
    /// Every loaded file's records, owned here once (files hold their row ranges).
    pub dataset: RwSignal<DatasetHandle>,
    /// The current filter.
    pub filter: RwSignal<Filter>,
    /// Chart choices.
    pub chart: RwSignal<ChartChoice>,
    /// Improvement view choices.
    pub improve: RwSignal<ImproveChoice>,
    /// The rows the filter lets through and the filter panel's counts, computed in one pass
    /// once per filter or dataset change for every view that reads them
    /// ([`AppState::with_filtered`], [`AppState::facets`]).
    matching: Memo<Filtered>,
    /// Settings of the other analysis views, kept in the address (`v.<name>`).
    pub view_params: RwSignal<std::collections::BTreeMap<String, String>>,
    /// Dark theme on.
    pub dark: RwSignal<bool>,
    /// Files an opened link was made from whose data it could not carry: the page asks for
    /// them and forgets each name once a file of that name is loaded.
    pub needed: RwSignal<Vec<String>>,
    /// Whether the view was picked by the user or a link (`false`: it follows the data); the
    /// same signal as the context's [`ViewPinned`].
    pub view_pinned: RwSignal<bool>,
    /// What the views need of the current dataset, worked out once (see [`Prepared`]).
    prepared: StoredValue<Prepared>,
    /// Next file id.
    next_id: StoredValue<u32>,
}

/// What the views of one dataset generation need, kept so that it is worked out once: by the
/// load's own tasks before the views are told of new data ([`AppState::finish_with`]), so the
/// first chart of a million rows does not come out of one long task, or else by the first view
/// that asks.
#[derive(Default)]
struct Prepared {
    /// The dataset generation all of this belongs to.
    generation: u64,
    /// The view that follows the data ([`default_view`]).
    view: Option<View>,
    /// The last filter's rows and counts.
    filtered: Option<(Filter, Arc<FilterPass>)>,
    /// The last chart and what it was made for.
    chart: Option<(ChartKey, Option<ChartContents>)>,
    /// The chart's point layouts ([`chart_contents_cached`]).
    layout: LayoutCache,
}

/// What the chart's contents depend on besides the dataset.
type ChartKey = (ChartChoice, Theme, Filter);

impl Prepared {
    /// Itself for `generation`, forgetting what belonged to another.
    fn at(&mut self, generation: u64) -> &mut Prepared {
        if self.generation != generation {
            *self = Prepared {
                generation,
                ..Prepared::default()
            };
        }
        self
    }
}

/// The rows a filter lets through with every dimension's counts. Equal only to itself: it is
/// recomputed exactly when the filter or the dataset changed, and comparing a million row
/// numbers to learn that would cost as much as the views it spares.
#[derive(Clone, Debug)]
struct Filtered(Arc<FilterPass>);

impl PartialEq for Filtered {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The dataset with a generation number, so derived state compares cheaply.
#[derive(Debug, Default)]
pub struct DatasetHandle {
    /// Bumped whenever records are added, removed or changed.
    pub generation: u64,
    /// The records of every loaded file.
    pub dataset: Dataset,
}

impl AppState {
    /// Fresh state with nothing loaded.
    pub fn new(dark: bool) -> AppState {
        let dataset = RwSignal::new(DatasetHandle::default());
        let filter = RwSignal::new(Filter::default());
        let prepared = StoredValue::new(Prepared::default());
        let matching = Memo::new(move |_| {
            let filter = filter.get();
            let generation = dataset.with(|h| h.generation);
            Filtered(filter_pass(dataset, prepared, generation, filter))
        });
        AppState {
            files: RwSignal::new(Vec::new()),
            dataset,
            filter,
            matching,
            chart: RwSignal::new(ChartChoice::default()),
            improve: RwSignal::new(ImproveChoice::default()),
            view_params: RwSignal::new(Default::default()),
            dark: RwSignal::new(dark),
            needed: RwSignal::new(Vec::new()),
            view_pinned: RwSignal::new(false),
            prepared,
            next_id: StoredValue::new(1),
        }
    }

    /// The dataset's generation, untracked.
    fn generation(&self) -> u64 {
        self.dataset.with_untracked(|h| h.generation)
    }

    /// The view that answers the loaded files' question ([`default_view`]), worked out once
    /// per dataset generation. Untracked.
    pub fn default_view(&self) -> View {
        let generation = self.generation();
        let kept = self
            .prepared
            .with_value(|p| (p.generation == generation).then_some(p.view).flatten());
        if let Some(view) = kept {
            return view;
        }
        let view = self.dataset.with_untracked(|h| default_view(&h.dataset));
        self.prepared
            .update_value(|p| p.at(generation).view = Some(view));
        view
    }

    /// The latency, throughput and scaling chart of the current filter and choices (tracked),
    /// kept until one of them or the dataset changes; `None` when no metric of the view is
    /// present.
    pub fn chart_contents(&self) -> Option<ChartContents> {
        let key: ChartKey = (self.chart.get(), self.theme(), self.filter.get());
        let generation = self.dataset.with(|h| h.generation);
        let pass = self.matching.get().0;
        self.chart_for(generation, key, &pass)
    }

    /// The chart for `key` over the filtered `rows` of dataset `generation`: kept, or made and
    /// kept. Untracked.
    fn chart_for(
        &self,
        generation: u64,
        key: ChartKey,
        pass: &FilterPass,
    ) -> Option<ChartContents> {
        let kept = self.prepared.with_value(|p| match &p.chart {
            Some((k, c)) if p.generation == generation && *k == key => Some(c.clone()),
            _ => None,
        });
        if let Some(contents) = kept {
            return contents;
        }
        self.dataset.with_untracked(|h| {
            self.prepared
                .try_update_value(|p| {
                    let p = p.at(generation);
                    let (choice, theme, _) = &key;
                    let contents = chart_contents_cached(
                        &h.dataset,
                        &pass.rows,
                        Some(&pass.configurations),
                        choice,
                        *theme,
                        generation,
                        &mut p.layout,
                    );
                    p.chart = Some((key, contents.clone()));
                    contents
                })
                .flatten()
        })
    }

    /// Tells the views of a dataset change made untracked (dataset `generation`), after working
    /// out in tasks of their own, with the browser free to paint in between, what they would
    /// otherwise all work out in the one task that follows the change: one row of each
    /// configuration ([`Dataset::configurations`]), the default view, the filter's rows and
    /// counts, and the chart. Whatever changed meanwhile is simply worked out again by the
    /// views.
    async fn publish(self, generation: u64) {
        let current = move || self.generation() == generation;
        yield_to_browser().await;
        if current() {
            self.dataset.with_untracked(|h| {
                h.dataset.configurations();
            });
        }
        yield_to_browser().await;
        let pinned = self.view_pinned.get_untracked();
        if current() && !pinned {
            self.default_view();
        }
        yield_to_browser().await;
        let filter = self.filter.get_untracked();
        let pass =
            current().then(|| filter_pass(self.dataset, self.prepared, generation, filter.clone()));
        yield_to_browser().await;
        if let (true, Some(pass)) = (current(), pass) {
            let mut choice = self.chart.get_untracked();
            if !pinned {
                choice.view = self.default_view();
            }
            let theme = if self.dark.get_untracked() {
                Theme::Dark
            } else {
                Theme::Light
            };
            self.chart_for(generation, (choice, theme, filter), &pass);
            yield_to_browser().await;
        }
        self.dataset.notify();
        self.files.notify();
    }

    /// The chart theme the page is in (tracked: charts redraw when it changes).
    pub fn theme(&self) -> Theme {
        if self.dark.get() {
            Theme::Dark
        } else {
            Theme::Light
        }
    }

    /// Runs `f` on the dataset and the rows the current filter lets through. Tracked: called in a
    /// `Memo` or effect, that reruns when the filter or the dataset changes.
    pub fn with_filtered<T>(&self, f: impl FnOnce(&Dataset, &[usize]) -> T) -> T {
        let pass = self.matching.get().0;
        self.dataset.with(|h| f(&h.dataset, &pass.rows))
    }

    /// The dataset's generation and the rows the filter lets through (tracked), for a view
    /// that works through them a step at a time with [`AppState::with_dataset_at`].
    pub fn filtered_rows(&self) -> (u64, Arc<FilterPass>) {
        let pass = self.matching.get().0;
        (self.dataset.with(|h| h.generation), pass)
    }

    /// `f` of the dataset while it is still `generation` (untracked); `None` once records
    /// were added, removed or changed, so rows numbered for another generation are never read.
    pub fn with_dataset_at<T>(&self, generation: u64, f: impl FnOnce(&Dataset) -> T) -> Option<T> {
        self.dataset
            .with_untracked(|h| (h.generation == generation).then(|| f(&h.dataset)))
    }

    /// [`AppState::with_filtered`], untracked.
    pub fn with_filtered_untracked<T>(&self, f: impl FnOnce(&Dataset, &[usize]) -> T) -> T {
        let pass = self.matching.get_untracked().0;
        self.dataset.with_untracked(|h| f(&h.dataset, &pass.rows))
    }

    /// Every dimension's values with their counts under the current filter (tracked).
    pub fn facets(&self) -> Vec<Facet> {
        self.matching.with(|m| m.0.facets.clone())
    }

    /// A view setting from the address, if any.
    pub fn param(&self, name: &str) -> Option<String> {
        self.view_params.with_untracked(|p| p.get(name).cloned())
    }

    /// Records a view setting so the address keeps it.
    pub fn set_param(&self, name: &str, value: String) {
        self.view_params.update(|p| {
            p.insert(name.to_string(), value);
        });
    }

    /// Adds a file in the loading state and returns its id.
    pub fn add_loading(&self, name: &str, origin: Origin, what: &str) -> u32 {
        let id = self.next_id.get_value();
        self.next_id.set_value(id + 1);
        self.files.update(|files| {
            files.push(LoadedFile {
                id,
                name: name.to_string(),
                origin,
                status: FileStatus::Loading(what.to_string()),
                revision: 0,
            })
        });
        id
    }

    /// Sets a file's loading or failed status (no-op if it was removed meanwhile).
    pub fn set_status(&self, id: u32, status: FileStatus) {
        self.files.update(|files| {
            if let Some(f) = files.iter_mut().find(|f| f.id == id) {
                f.status = status;
                f.revision = f.revision.wrapping_add(1);
            }
        });
    }

    /// Moves a parsed file's records into the dataset and marks the file loaded.
    pub fn finish(
        &self,
        id: u32,
        format: String,
        records: Vec<Record>,
        warnings: Vec<String>,
        note: Option<String>,
    ) {
        let index = Index::build(&records);
        self.finish_indexed(id, format, records, index, warnings, note);
    }

    /// [`AppState::finish`] with the records' index built already (by the parse worker).
    pub fn finish_indexed(
        &self,
        id: u32,
        format: String,
        records: Vec<Record>,
        index: Index,
        warnings: Vec<String>,
        note: Option<String>,
    ) {
        self.finish_with(id, format, warnings, note, |ds| {
            ds.extend_indexed(records, index)
        });
    }

    /// Marks a parsed table loaded whose rows carry only dimensions and metrics, kept as its
    /// index ([`Dataset::extend_columnar`]): no record a row is built.
    pub fn finish_columnar(
        &self,
        id: u32,
        format: String,
        index: Index,
        warnings: Vec<String>,
        note: Option<String>,
    ) {
        self.finish_with(id, format, warnings, note, |ds| ds.extend_columnar(index));
    }

    /// Adds a file's rows to the dataset with `add` and marks the file loaded.
    fn finish_with(
        &self,
        id: u32,
        format: String,
        warnings: Vec<String>,
        note: Option<String>,
        add: impl FnOnce(&mut Dataset) -> Range<usize>,
    ) {
        let Some(name) = self
            .files
            .with_untracked(|f| f.iter().find(|f| f.id == id).map(|f| f.name.clone()))
        else {
            return;
        };
        if self.needed.with_untracked(|n| n.contains(&name)) {
            self.needed.update(|n| n.retain(|x| *x != name));
        }
        let mut rows = 0..0;
        let mut written_by = None;
        let mut notes = Vec::new();
        let mut generation = 0;
        // The views are told in later tasks ([`AppState::publish`]).
        self.dataset.update_untracked(|h| {
            rows = add(&mut h.dataset);
            written_by = provenance::written_by(&h.dataset, rows.clone());
            notes = file_notes(&h.dataset, rows.clone());
            h.generation += 1;
            generation = h.generation;
        });
        // The file list shows the file loaded when the views see its rows.
        self.files.update_untracked(|files| {
            if let Some(f) = files.iter_mut().find(|f| f.id == id) {
                f.status = FileStatus::Loaded {
                    format,
                    rows,
                    warnings,
                    note,
                    written_by,
                    notes,
                };
                f.revision = f.revision.wrapping_add(1);
            }
        });
        spawn_local(self.publish(generation));
    }

    /// The address form of the current view (tracked): chart choices, view settings,
    /// filters, URL files, samples and the files still needed. Local data is added only by
    /// "copy link" ([`crate::share::share_link`]).
    pub fn address_link(&self) -> ViewState {
        let mut link = self.chart.with(ChartChoice::to_view_state);
        if self.chart.with(|c| c.view == View::Improvement) {
            self.improve.with(|c| c.write_link(&mut link));
        }
        link.params = self.view_params.get();
        link.set_filter(&self.filter.get());
        self.files.with(|files| {
            for f in files {
                match &f.origin {
                    Origin::Url(u) => link.data.push(u.clone()),
                    Origin::Sample(s) => link.samples.push(s.clone()),
                    Origin::Local | Origin::Listed(_) => {}
                }
            }
        });
        link.needs = self.needed.get();
        link
    }

    /// What the address bar holds (tracked): [`AppState::address_link`] naming the local files
    /// too, as needed, so the address opened elsewhere (or after a reload) says which files
    /// to drop instead of opening on an empty page without a word.
    pub fn address_bar(&self) -> ViewState {
        let mut link = self.address_link();
        self.files.with(|files| {
            for f in files.iter().filter(|f| f.origin == Origin::Local) {
                if !link.needs.contains(&f.name) {
                    link.needs.push(f.name.clone());
                }
            }
        });
        link
    }

    /// [`AppState::address_link`] without subscribing to anything (for event handlers).
    pub fn address_link_untracked(&self) -> ViewState {
        untrack(|| self.address_link())
    }

    /// The loaded local files with their records (as annotated), for a link to carry:
    /// (name, format, records).
    pub fn local_files(&self) -> Vec<(String, String, Vec<Record>)> {
        let files = self.files.get_untracked();
        self.dataset.with_untracked(|h| {
            files
                .iter()
                .filter(|f| f.origin == Origin::Local)
                .filter_map(|f| match &f.status {
                    FileStatus::Loaded { format, rows, .. } => Some((
                        f.name.clone(),
                        format.clone(),
                        h.dataset.records_in(rows.clone()).into_owned(),
                    )),
                    _ => None,
                })
                .collect()
        })
    }

    /// Removes a file and its records.
    pub fn remove(&self, id: u32) {
        let mut removed = None;
        self.files.update(|files| {
            if let Some(pos) = files.iter().position(|f| f.id == id) {
                if let FileStatus::Loaded { rows, .. } = &files[pos].status {
                    removed = Some(rows.clone());
                }
                files.remove(pos);
            }
            // Later files' records move down by the removed count.
            if let Some(gone) = &removed {
                for f in files.iter_mut() {
                    if let FileStatus::Loaded { rows, .. } = &mut f.status {
                        if rows.start >= gone.end {
                            *rows = rows.start - gone.len()..rows.end - gone.len();
                        }
                    }
                }
            }
        });
        if let Some(rows) = removed {
            self.dataset.update(|h| {
                h.dataset.remove_rows(rows);
                h.generation += 1;
            });
        }
    }

    /// Sets a dimension on every record of one file (user annotation, marked inferred).
    pub fn annotate(&self, id: u32, key: &DimKey, value: &str) -> Result<(), String> {
        let rows = self.files.with_untracked(|files| {
            files
                .iter()
                .find(|f| f.id == id)
                .and_then(|f| match &f.status {
                    FileStatus::Loaded { rows, .. } => Some(rows.clone()),
                    _ => None,
                })
        });
        let Some(rows) = rows else {
            return Err("the file is not loaded".into());
        };
        let value = value.trim().to_string();
        let mut result = Ok(());
        self.dataset.update(|h| {
            result = h
                .dataset
                .update_rows(rows, |r| {
                    if value.is_empty() {
                        r.inferred.remove(&key.name());
                        r.set_dim(key, None)
                    } else {
                        r.set_inferred(key, value.clone().into(), "user")
                    }
                })
                .map_err(|e| e.to_string());
            h.generation += 1;
        });
        result
    }
}

/// The rows and counts of `filter` over dataset `generation`: kept, or worked out and kept.
/// Untracked.
fn filter_pass(
    dataset: RwSignal<DatasetHandle>,
    prepared: StoredValue<Prepared>,
    generation: u64,
    filter: Filter,
) -> Arc<FilterPass> {
    let kept = prepared.with_value(|p| match &p.filtered {
        Some((f, pass)) if p.generation == generation && *f == filter => Some(pass.clone()),
        _ => None,
    });
    if let Some(pass) = kept {
        return pass;
    }
    let pass = Arc::new(dataset.with_untracked(|h| h.dataset.filter_pass(&filter)));
    prepared.update_value(|p| p.at(generation).filtered = Some((filter, pass.clone())));
    pass
}
