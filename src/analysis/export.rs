//! Export: any analysis table as GitHub-flavoured Markdown (ready to paste into a pull
//! request), CSV or JSON, through one [`TextTable`] shape.
//!
//! Owns the cell escaping rules: Markdown cells escape `|` and `\`, turn newlines into `<br>`
//! and drop other control characters, so a hostile cell can never add a column or a row.
//! Builders for the tables that do not live in [`crate::analysis`] are here too: the chart
//! comparison table ([`comparison_text_table`]) and the record table ([`record_text_table`]).

use crate::analysis::table::Column;
use crate::charts::comparison::ComparisonTable;
use crate::charts::style::format_value;
use crate::model::{format_number, Dataset, DimKey, DimValue, MetricKey};

/// A column of a [`TextTable`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextColumn {
    /// A snake_case id: the CSV header and the JSON key (`improvement_pct`, `gpu`).
    pub id: String,
    /// The human header (Markdown).
    pub header: String,
    /// Whether cells are numbers (right-aligned in Markdown).
    pub numeric: bool,
}

impl TextColumn {
    /// A column.
    pub fn new(id: impl Into<String>, header: impl Into<String>, numeric: bool) -> TextColumn {
        TextColumn {
            id: id.into(),
            header: header.into(),
            numeric,
        }
    }
}

/// One cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Text.
    Text(String),
    /// A number with the text it is shown as (JSON gets the number, Markdown/CSV the text).
    Number {
        /// The value.
        value: f64,
        /// How it is shown.
        text: String,
    },
    /// No value.
    Empty,
}

impl Cell {
    /// A number shown as `text`.
    pub fn number(value: f64, text: impl Into<String>) -> Cell {
        Cell::Number {
            value,
            text: text.into(),
        }
    }

    /// A dimension value (numbers stay numbers).
    pub fn dim(value: Option<&DimValue>) -> Cell {
        match value {
            Some(DimValue::Num(n)) => Cell::number(*n, format_number(*n)),
            Some(DimValue::Text(t)) => Cell::Text(t.clone()),
            None => Cell::Empty,
        }
    }

    /// The text shown.
    pub fn text(&self) -> &str {
        match self {
            Cell::Text(t) => t,
            Cell::Number { text, .. } => text,
            Cell::Empty => "",
        }
    }
}

/// A table of text and numbers, exportable as Markdown, CSV or JSON.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TextTable {
    /// The columns.
    pub columns: Vec<TextColumn>,
    /// The rows, each with one cell per column.
    pub rows: Vec<Vec<Cell>>,
}

/// Escapes text for one GitHub-flavoured Markdown table cell.
pub fn escape_markdown_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '|' => out.push_str("\\|"),
            '\\' => out.push_str("\\\\"),
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push_str("<br>");
            }
            '\n' => out.push_str("<br>"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

impl TextTable {
    /// GitHub-flavoured Markdown: a header row, an alignment row (numbers right-aligned) and
    /// one row per table row, every cell escaped.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        out.push_str(&line(
            self.columns
                .iter()
                .map(|c| escape_markdown_cell(&c.header))
                .collect(),
        ));
        out.push_str(&line(
            self.columns
                .iter()
                .map(|c| if c.numeric { "---:" } else { "---" }.to_string())
                .collect(),
        ));
        for row in &self.rows {
            out.push_str(&line(
                (0..self.columns.len())
                    .map(|i| {
                        row.get(i)
                            .map_or(String::new(), |c| escape_markdown_cell(c.text()))
                    })
                    .collect(),
            ));
        }
        out
    }

    /// Moves the columns among the first `candidates` whose cell is the same on every row (of
    /// two or more rows) out of the table, returning the shorter table and the moved
    /// `(header, value)` pairs, so a Markdown caption can say "Model: X" once instead of on
    /// every row. Tables of fewer than two rows come back unchanged.
    pub fn split_constant_columns(&self, candidates: usize) -> (TextTable, Vec<(String, String)>) {
        if self.rows.len() < 2 {
            return (self.clone(), Vec::new());
        }
        let constant: Vec<bool> = (0..self.columns.len())
            .map(|i| {
                i < candidates
                    && self
                        .rows
                        .iter()
                        .all(|r| r.get(i).map(Cell::text) == self.rows[0].get(i).map(Cell::text))
            })
            .collect();
        let moved = self
            .columns
            .iter()
            .enumerate()
            .filter(|(i, _)| constant[*i])
            .map(|(i, c)| {
                let value = self.rows[0].get(i).map_or("", Cell::text).to_string();
                (c.header.clone(), value)
            })
            .collect();
        let keep = |i: &usize| !constant[*i];
        let table = TextTable {
            columns: self
                .columns
                .iter()
                .enumerate()
                .filter(|(i, _)| keep(i))
                .map(|(_, c)| c.clone())
                .collect(),
            rows: self
                .rows
                .iter()
                .map(|r| {
                    r.iter()
                        .enumerate()
                        .filter(|(i, _)| keep(i))
                        .map(|(_, c)| c.clone())
                        .collect()
                })
                .collect(),
        };
        (table, moved)
    }

    /// CSV with the column ids as the header.
    pub fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut result = w.write_record(self.columns.iter().map(|c| c.id.as_str()));
        for row in &self.rows {
            if result.is_err() {
                break;
            }
            result = w
                .write_record((0..self.columns.len()).map(|i| row.get(i).map_or("", |c| c.text())));
        }
        // Writing to a Vec cannot fail; an error here would be a csv bug, so fall back to empty.
        match (result, w.into_inner()) {
            (Ok(()), Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            _ => String::new(),
        }
    }

    /// A JSON array with one object per row keyed by column id; numbers stay numbers
    /// (non-finite ones become strings such as `"inf"`), empty cells are `null`.
    pub fn to_json(&self) -> serde_json::Value {
        let rows = self
            .rows
            .iter()
            .map(|row| {
                let mut obj = serde_json::Map::new();
                for (i, col) in self.columns.iter().enumerate() {
                    let v = match row.get(i) {
                        Some(Cell::Text(t)) => serde_json::Value::String(t.clone()),
                        Some(Cell::Number { value, text }) => serde_json::Number::from_f64(*value)
                            .map_or_else(
                                || serde_json::Value::String(text.clone()),
                                serde_json::Value::Number,
                            ),
                        Some(Cell::Empty) | None => serde_json::Value::Null,
                    };
                    obj.insert(col.id.clone(), v);
                }
                serde_json::Value::Object(obj)
            })
            .collect();
        serde_json::Value::Array(rows)
    }
}

/// The chart comparison table (the panel when there are panels, x, one column per series
/// with the metric's unit, fastest, faster by %) as a [`TextTable`].
pub fn comparison_text_table(
    table: &ComparisonTable,
    facet: Option<&DimKey>,
    x: &DimKey,
    metric: &MetricKey,
) -> TextTable {
    let unit = metric.unit().unwrap_or("");
    let numeric_x = table.rows.iter().all(|r| r.x.as_f64().is_some());
    let facet = facet.filter(|_| table.rows.iter().any(|r| r.facet.is_some()));
    let numeric_facet = table
        .rows
        .iter()
        .all(|r| r.facet.as_ref().is_some_and(|f| f.as_f64().is_some()));
    let mut columns: Vec<TextColumn> = facet
        .map(|f| TextColumn::new(f.name(), f.label(), numeric_facet))
        .into_iter()
        .collect();
    columns.push(TextColumn::new(x.name(), x.label(), numeric_x));
    for s in &table.series {
        let header = if unit.is_empty() {
            s.clone()
        } else {
            format!("{s} ({unit})")
        };
        columns.push(TextColumn::new(s.clone(), header, true));
    }
    columns.push(TextColumn::new(
        "fastest",
        if table.lower_is_better {
            "Fastest"
        } else {
            "Best"
        },
        false,
    ));
    columns.push(TextColumn::new("faster_by_pct", "Better by (%)", true));
    let noted = table.rows.iter().any(|r| !r.notes.is_empty());
    if noted {
        columns.push(TextColumn::new("data_quality", "Data quality", false));
    }
    let rows = table
        .rows
        .iter()
        .map(|r| {
            let mut cells: Vec<Cell> = facet
                .map(|_| Cell::dim(r.facet.as_ref()))
                .into_iter()
                .collect();
            cells.push(Cell::dim(Some(&r.x)));
            cells.extend(
                r.values
                    .iter()
                    .map(|v| v.map_or(Cell::Empty, |v| Cell::number(v, format_value(v)))),
            );
            cells.push(
                r.fastest_text(&table.series)
                    .map_or(Cell::Empty, Cell::Text),
            );
            cells.push(
                r.faster_by_pct
                    .map_or(Cell::Empty, |p| Cell::number(p, format_value(p))),
            );
            if noted {
                cells.push(Cell::Text(r.notes.join("; ")));
            }
            cells
        })
        .collect();
    TextTable { columns, rows }
}

/// The records at `indices` under the given table columns, cells as the record table shows
/// them.
pub fn record_text_table(ds: &Dataset, indices: &[usize], columns: &[Column]) -> TextTable {
    let cols = columns
        .iter()
        .map(|c| TextColumn::new(c.name(), c.header(), c.is_numeric()))
        .collect();
    let rows = indices
        .iter()
        .filter_map(|&i| ds.record(i))
        .map(|r| {
            columns
                .iter()
                .map(|c| match c {
                    Column::Dim(k) => Cell::dim(r.dim(k).as_ref()),
                    Column::Metric(m) => r
                        .metric(m)
                        .map_or(Cell::Empty, |v| Cell::number(v, format_value(v))),
                })
                .collect()
        })
        .collect();
    TextTable {
        columns: cols,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Record;

    #[test]
    fn markdown_escapes_pipes_and_newlines() {
        let t = TextTable {
            columns: vec![
                TextColumn::new("a", "A|B", false),
                TextColumn::new("n", "N", true),
            ],
            rows: vec![vec![
                Cell::Text("x|y\nz\r\nw".into()),
                Cell::number(1.5, "1.50"),
            ]],
        };
        assert_eq!(
            t.to_markdown(),
            "| A\\|B | N |\n| --- | ---: |\n| x\\|y<br>z<br>w | 1.50 |\n"
        );
        assert_eq!(t.to_csv(), "a,n\n\"x|y\nz\r\nw\",1.50\n");
        assert_eq!(t.to_json()[0]["n"], 1.5);
    }

    #[test]
    fn chart_comparison_table_exports() {
        use crate::charts::{build_series, comparison_table, ChartKind, ChartSpec};
        use crate::model::{Dim, LatencyMetric, Stat};
        let metric = MetricKey::latency(LatencyMetric::Ttft, Stat::Mean);
        let rec = |engine: &str, ttft: f64| {
            let mut r = Record {
                engine: Some(engine.into()),
                request_rate: Some(10.0),
                ..Record::default()
            };
            r.set_metric(metric.clone(), ttft);
            r
        };
        let ds = Dataset::new(vec![rec("sgl", 68.60), rec("vllm|x", 56.90)]);
        let spec = ChartSpec {
            kind: ChartKind::Bars,
            x: Dim::RequestRate.into(),
            metric: metric.clone(),
            series_by: vec![Dim::Engine.into()],
            facet_by: None,
            log2_x: false,
            log_y: false,
            theme: crate::charts::Theme::Light,
            title: None,
        };
        let series = build_series(&ds, &[0, 1], &spec);
        let table = comparison_table(&series, &metric);
        let md = comparison_text_table(&table, None, &spec.x, &metric).to_markdown();
        assert_eq!(
            md,
            "| Request rate (req/s) | sgl (ms) | vllm\\|x (ms) | Fastest | Better by (%) |\n\
             | ---: | ---: | ---: | --- | ---: |\n\
             | 10 | 68.60 | 56.90 | vllm\\|x | 17.06 |\n"
        );
    }

    #[test]
    fn constant_key_columns_move_to_a_caption() {
        let t = TextTable {
            columns: vec![
                TextColumn::new("model", "Model", false),
                TextColumn::new("batch_size", "Batch size", true),
                TextColumn::new("v", "V", true),
            ],
            rows: vec![
                vec![
                    Cell::Text("m".into()),
                    Cell::number(1.0, "1"),
                    Cell::number(2.0, "2"),
                ],
                vec![
                    Cell::Text("m".into()),
                    Cell::number(8.0, "8"),
                    Cell::number(2.0, "2"),
                ],
            ],
        };
        let (short, moved) = t.split_constant_columns(2);
        assert_eq!(moved, [("Model".to_string(), "m".to_string())]);
        assert_eq!(
            short.to_markdown(),
            "| Batch size | V |\n| ---: | ---: |\n| 1 | 2 |\n| 8 | 2 |\n"
        );
    }

    #[test]
    fn record_table_keeps_numbers() {
        let mut r = Record {
            model: Some("m".into()),
            ..Record::default()
        };
        r.set_metric(MetricKey::OutputThroughput, 12.345);
        let ds = Dataset::new(vec![r]);
        let cols = [
            Column::from_name("model").unwrap(),
            Column::from_name("output_throughput").unwrap(),
        ];
        let t = record_text_table(&ds, &[0], &cols);
        assert!(t.to_markdown().contains("| m | 12.35 |"));
        assert_eq!(t.to_json()[0]["output_throughput"], 12.345);
    }
}
