//! The record table view: a column chooser and a sortable table of the filtered records.

use leptos::prelude::*;

use super::state::AppState;
use crate::analysis::quality::record_flags;
use crate::analysis::table::{self, Column};

/// Rows shown at once in the table view; sorting and filtering still cover every record.
const TABLE_ROWS: usize = 500;

/// The filtered records as a table: a column chooser, a count and up to [`TABLE_ROWS`]
/// rows, sorted by a click on a header.
#[component]
pub fn TableView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let chosen = RwSignal::new(None::<Vec<Column>>);
    let sort = RwSignal::new(None::<(Column, bool)>);
    let data = Memo::new(move |_| {
        let (chosen, sort) = (chosen.get(), sort.get());
        state.with_filtered(|ds, rows| {
            let page = table::record_page(ds, rows, chosen.as_deref(), sort.as_ref(), TABLE_ROWS);
            // Each row ends with its data-quality flags.
            let rows: Vec<Vec<String>> = page
                .rows
                .into_iter()
                .map(|(i, mut row)| {
                    let flags: Vec<String> = ds
                        .record(i)
                        .map(|r| record_flags(&r))
                        .unwrap_or_default()
                        .into_iter()
                        .map(|f| f.text)
                        .collect();
                    row.push(flags.join("; "));
                    row
                })
                .collect();
            (page.available, page.columns, rows, page.total)
        })
    });
    let toggle_column = move |col: Column| {
        let shown = data.with_untracked(|d| table::toggle_column(&d.1, &col));
        chosen.set(Some(shown));
    };
    view! {
        {move || {
            let (available, columns, rows, total) = data.get();
            let sorted = sort.get();
            view! {
                <details class="column-chooser">
                    <summary>"Columns…"</summary>
                    <div class="column-list">
                        {available.into_iter().map(|c| {
                            let on = columns.contains(&c);
                            let header = c.header();
                            let name = c.name();
                            view! {
                                <label>
                                    <input type="checkbox" data-column=name prop:checked=on
                                        on:change=move |_| toggle_column(c.clone())/>
                                    {header}
                                </label>
                            }
                        }).collect_view()}
                    </div>
                </details>
                <p class="muted" id="table-count">
                    {if total > TABLE_ROWS {
                        format!("first {TABLE_ROWS} of {total} records (sorting covers all)")
                    } else {
                        format!("{total} records")
                    }}
                </p>
                <div class="table-scroll" tabindex="0" role="region" aria-label="Table, scrolls">
                    <table class="records" id="records-table">
                        <thead><tr>
                            {columns.iter().map(|c| {
                                let col = c.clone();
                                let arrow = match &sorted {
                                    Some((s, desc)) if s == c => if *desc { " ▼" } else { " ▲" },
                                    _ => "",
                                };
                                let numeric = c.is_numeric();
                                view! {
                                    <th class:num=numeric data-column=c.name() on:click=move |_| {
                                        let col = col.clone();
                                        sort.update(|s| *s = table::next_sort(s.take(), col));
                                    }>{c.header()}{arrow}</th>
                                }
                            }).collect_view()}
                            <th data-column="flags">"Data quality"</th>
                        </tr></thead>
                        <tbody>
                            {rows.into_iter().map(|row| view! {
                                <tr>{row.into_iter().zip(columns.iter().map(Column::is_numeric).chain([false])).map(|(cell, numeric)| view! {
                                    <td class:num=numeric>{cell}</td>
                                }).collect_view()}</tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }
        }}
    }
}
