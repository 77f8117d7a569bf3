//! How every figure looks: the page theme and its colours, the series palette, the base
//! layout the analysis figures start from, and the text every chart shows (escaped labels,
//! formatted values, the "(none)" of a missing value, legend titles).
//!
//! One place for these so the main chart, the improvement, trade-off and distribution figures
//! and the tables under them read alike. Imports nothing from [`crate::analysis`].

use crate::charts::plotly::common::Title;
use crate::charts::plotly::layout::{Axis, HoverMode, Layout, Margin};

use crate::model::{format_number, DimKey};

/// Colour scheme of the page the chart sits on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Theme {
    /// Dark text on white.
    #[default]
    Light,
    /// Light text on a dark background.
    Dark,
}

pub use crate::model::NO_VALUE;

/// Formats a metric value for tables and hover text: two decimals, thousands kept readable.
pub fn format_value(v: f64) -> String {
    if !v.is_finite() {
        return format_number(v);
    }
    if v.abs() >= 100_000.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The legend title for series split by `by`: the dimensions' labels joined by " · ".
pub fn series_title(by: &[DimKey]) -> String {
    by.iter().map(DimKey::label).collect::<Vec<_>>().join(" · ")
}

/// Escapes text for plotly's HTML-ish labels, so hostile file content stays text.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Colours that read on both white and dark backgrounds.
pub const PALETTE: [&str; 10] = [
    "#e8710a", "#1a73e8", "#12b5cb", "#e52592", "#9334e6", "#7cb342", "#f9ab00", "#5f6368",
    "#d93025", "#188038",
];

/// The colours of a [`Theme`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThemeColors {
    /// Text: titles, tick labels, legend.
    pub text: &'static str,
    /// Page and plot background.
    pub background: &'static str,
    /// Grid, axis and zero lines.
    pub grid: &'static str,
}

impl Theme {
    /// The theme's colours (the page's own, from `style/main.css`).
    pub fn colors(self) -> ThemeColors {
        let (text, background, grid) = match self {
            Theme::Light => ("#202124", "#ffffff", "#e0e0e0"),
            Theme::Dark => ("#e8eaed", "#1e1f22", "#3c4043"),
        };
        ThemeColors {
            text,
            background,
            grid,
        }
    }
}

/// An axis titled `title` (escaped) with grid, axis and zero lines in the theme's grid colour.
pub(crate) fn themed_axis(title: &str, theme: Theme) -> Axis {
    let grid = theme.colors().grid;
    Axis::new()
        .title(Title::with_text(escape_html(title)))
        .grid_color(grid)
        .line_color(grid)
        .zero_line_color(grid)
}

/// The layout every figure starts from: escaped title and axis titles, the theme's colours,
/// closest-point hover and room for the axis titles.
pub fn base_layout(title: &str, x_title: &str, y_title: &str, theme: Theme) -> Layout {
    let colors = theme.colors();
    Layout::new()
        .title(Title::with_text(escape_html(title)))
        .x_axis(themed_axis(x_title, theme))
        .y_axis(themed_axis(y_title, theme))
        .hover_mode(HoverMode::Closest)
        .margin(Margin::new().left(70).right(20).top(60).bottom(60))
        .paper_background_color(colors.background)
        .plot_background_color(colors.background)
        .font(crate::charts::plotly::common::Font::new().color(colors.text))
}
