//! The part of plotly.js's figure schema the charts use, as builders that write the JSON
//! directly (`{"data": [...], "layout": {...}, "config": {}}`, what `Plotly.react` takes).
//!
//! Why not the `plotly` crate, which the charts used before: its traces and layout are large
//! structs of optional fields serialised through `erased_serde` trait objects, and in the
//! explorer's wasm that was plotly 51 KB + erased_serde 49 KB + some 45 KB of serde's
//! per-field serialisers, about a tenth of the page (`scripts/wasm-sizes.py`), to write JSON
//! keys. Here each builder holds a JSON object and each setter writes one key, so the code is
//! one small function per setter, whatever the figure. The names and signatures follow the
//! `plotly` crate's (`Scatter::new(x, y).mode(Mode::Lines)`, `Layout::new().x_axis(...)`),
//! and the keys written are plotly.js's (`hovertext`, `showlegend`, `paper_bgcolor`), so the
//! figures' JSON is what it was.
//!
//! Only what the charts set is here; a chart that needs another attribute adds its setter.

use serde::Serialize;
use serde_json::{Map, Value};

/// A JSON value from anything serialisable (numbers, strings, vectors of them); `null` for
/// what JSON cannot hold (a map with non-string keys): never the case for chart data.
fn json<T: Serialize>(v: T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// A number, `null` when not finite (plotly leaves a gap), as serde_json writes `f64`.
fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// A builder over one JSON object: `set` writes a key.
macro_rules! object {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default, PartialEq)]
        pub struct $name(serde_json::Map<String, serde_json::Value>);

        impl $name {
            /// An empty one.
            pub fn new() -> Self {
                Self::default()
            }

            fn set(mut self, key: &str, value: serde_json::Value) -> Self {
                self.0.insert(key.to_owned(), value);
                self
            }
        }

        impl From<$name> for serde_json::Value {
            fn from(o: $name) -> serde_json::Value {
                serde_json::Value::Object(o.0)
            }
        }
    };
}

/// An enumeration written as fixed JSON strings.
macro_rules! names {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $(
                #[doc = concat!("`", $text, "`")]
                $variant,
            )+
        }

        impl From<$name> for Value {
            fn from(v: $name) -> Value {
                Value::String(match v { $($name::$variant => $text,)+ }.to_owned())
            }
        }
    };
}

/// Attributes shared by the objects below.
pub mod common {
    use super::{json, number, Map, Serialize, Value};

    names!(
        /// How a scatter trace draws its points (`mode`).
        Mode {
            Lines => "lines",
            Markers => "markers",
            Text => "text",
            LinesMarkers => "lines+markers",
            LinesText => "lines+text",
            MarkersText => "markers+text",
            LinesMarkersText => "lines+markers+text",
            None => "none",
        }
    );

    names!(
        /// What hovering a point shows (`hoverinfo`).
        HoverInfo {
            X => "x",
            Y => "y",
            Z => "z",
            XAndY => "x+y",
            Text => "text",
            Name => "name",
            All => "all",
            None => "none",
            Skip => "skip",
        }
    );

    names!(
        /// Where a scatter point's text sits (`textposition`).
        Position {
            TopLeft => "top left",
            TopCenter => "top center",
            TopRight => "top right",
            MiddleLeft => "middle left",
            MiddleCenter => "middle center",
            MiddleRight => "middle right",
            BottomLeft => "bottom left",
            BottomCenter => "bottom center",
            BottomRight => "bottom right",
        }
    );

    names!(
        /// Where a bar's text sits (`textposition`).
        TextPosition {
            Inside => "inside",
            Outside => "outside",
            Auto => "auto",
            None => "none",
        }
    );

    names!(
        /// An annotation's anchor (`xanchor`, `yanchor`).
        Anchor {
            Auto => "auto",
            Left => "left",
            Center => "center",
            Right => "right",
            Top => "top",
            Middle => "middle",
            Bottom => "bottom",
        }
    );

    names!(
        /// A line's dash pattern.
        DashType {
            Solid => "solid",
            Dot => "dot",
            Dash => "dash",
            LongDash => "longdash",
            DashDot => "dashdot",
            LongDashDot => "longdashdot",
        }
    );

    names!(
        /// How a line joins its points.
        LineShape {
            Linear => "linear",
            Spline => "spline",
            Hv => "hv",
            Vh => "vh",
            Hvh => "hvh",
            Vhv => "vhv",
        }
    );

    names!(
        /// A marker's shape.
        MarkerSymbol {
            Circle => "circle",
            CircleOpen => "circle-open",
            Square => "square",
            Diamond => "diamond",
            Cross => "cross",
            X => "x",
            TriangleUp => "triangle-up",
            Star => "star",
        }
    );

    names!(
        /// What an error bar's values mean.
        ErrorType {
            Percent => "percent",
            Constant => "constant",
            SquareRoot => "sqrt",
            Data => "data",
        }
    );

    /// A title: `{"text": ...}`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Title(String);

    impl Title {
        /// A title saying `text`.
        pub fn with_text(text: impl AsRef<str>) -> Title {
            Title(text.as_ref().to_owned())
        }
    }

    impl From<&str> for Title {
        fn from(text: &str) -> Title {
            Title::with_text(text)
        }
    }

    impl From<String> for Title {
        fn from(text: String) -> Title {
            Title(text)
        }
    }

    impl From<Title> for Value {
        fn from(t: Title) -> Value {
            let mut m = Map::new();
            m.insert("text".into(), Value::String(t.0));
            Value::Object(m)
        }
    }

    object!(
        /// A font.
        Font
    );

    impl Font {
        /// Its colour (any CSS colour).
        pub fn color(self, c: impl AsRef<str>) -> Font {
            self.set("color", c.as_ref().into())
        }

        /// Its size in px.
        pub fn size(self, px: usize) -> Font {
            self.set("size", px.into())
        }
    }

    object!(
        /// A line of a trace or of a marker's outline.
        Line
    );

    impl Line {
        /// Its colour.
        pub fn color(self, c: impl AsRef<str>) -> Line {
            self.set("color", c.as_ref().into())
        }

        /// Its width in px.
        pub fn width(self, px: f64) -> Line {
            self.set("width", number(px))
        }

        /// Its dash pattern.
        pub fn dash(self, d: DashType) -> Line {
            self.set("dash", d.into())
        }

        /// How it joins the points.
        pub fn shape(self, s: LineShape) -> Line {
            self.set("shape", s.into())
        }
    }

    object!(
        /// A trace's markers.
        Marker
    );

    impl Marker {
        /// One colour for all.
        pub fn color(self, c: impl AsRef<str>) -> Marker {
            self.set("color", c.as_ref().into())
        }

        /// A colour per point.
        pub fn color_array<C: Serialize>(self, c: Vec<C>) -> Marker {
            self.set("color", json(c))
        }

        /// One size for all, in px.
        pub fn size(self, px: usize) -> Marker {
            self.set("size", px.into())
        }

        /// A size per point.
        pub fn size_array(self, px: Vec<usize>) -> Marker {
            self.set("size", json(px))
        }

        /// Their shape.
        pub fn symbol(self, s: MarkerSymbol) -> Marker {
            self.set("symbol", s.into())
        }

        /// Their opacity, 0 to 1.
        pub fn opacity(self, o: f64) -> Marker {
            self.set("opacity", number(o))
        }

        /// Their outline.
        pub fn line(self, l: Line) -> Marker {
            self.set("line", l.into())
        }
    }

    /// Error bars (`error_y`).
    #[derive(Clone, Debug, PartialEq)]
    pub struct ErrorData(Map<String, Value>);

    impl ErrorData {
        /// Error bars whose values mean `kind`.
        pub fn new(kind: ErrorType) -> ErrorData {
            let mut m = Map::new();
            m.insert("type".into(), kind.into());
            ErrorData(m)
        }

        fn set(mut self, key: &str, value: Value) -> Self {
            self.0.insert(key.to_owned(), value);
            self
        }

        /// The lengths above each point (and below, unless `array_minus` is set).
        pub fn array(self, v: Vec<f64>) -> ErrorData {
            self.set("array", json(v))
        }

        /// The lengths below each point.
        pub fn array_minus(self, v: Vec<f64>) -> ErrorData {
            self.set("arrayminus", json(v))
        }

        /// Their colour.
        pub fn color(self, c: impl AsRef<str>) -> ErrorData {
            self.set("color", c.as_ref().into())
        }

        /// The bars' line width in px.
        pub fn thickness(self, px: f64) -> ErrorData {
            self.set("thickness", number(px))
        }

        /// The caps' width in px.
        pub fn width(self, px: usize) -> ErrorData {
            self.set("width", px.into())
        }
    }

    impl From<ErrorData> for Value {
        fn from(e: ErrorData) -> Value {
            Value::Object(e.0)
        }
    }

    object!(
        /// A heatmap's colour bar.
        ColorBar
    );

    impl ColorBar {
        /// Its title.
        pub fn title(self, t: impl Into<Title>) -> ColorBar {
            self.set("title", t.into().into())
        }
    }

    /// A stop of a colour scale: where (0 to 1) and which colour.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ColorScaleElement(pub f64, pub String);

    /// A colour scale.
    #[derive(Clone, Debug, PartialEq)]
    pub enum ColorScale {
        /// Stops from 0 to 1.
        Vector(Vec<ColorScaleElement>),
    }

    impl From<ColorScale> for Value {
        fn from(c: ColorScale) -> Value {
            let ColorScale::Vector(stops) = c;
            Value::Array(
                stops
                    .into_iter()
                    .map(|s| Value::Array(vec![number(s.0), Value::String(s.1)]))
                    .collect(),
            )
        }
    }
}

/// The layout: axes, legend, margins, annotations and shapes.
pub mod layout {
    use super::common::{Anchor, DashType, Font, Title};
    use super::{json, number, Serialize, Value};

    names!(
        /// An axis's scale (`type`).
        AxisType {
            Default => "-",
            Linear => "linear",
            Log => "log",
            Date => "date",
            Category => "category",
        }
    );

    names!(
        /// How a categorical axis orders its values.
        CategoryOrder {
            Trace => "trace",
            CategoryAscending => "category ascending",
            CategoryDescending => "category descending",
            Array => "array",
        }
    );

    names!(
        /// What hovering picks.
        HoverMode {
            X => "x",
            Y => "y",
            Closest => "closest",
            XUnified => "x unified",
            YUnified => "y unified",
        }
    );

    names!(
        /// How bars of several traces share a category.
        BarMode {
            Stack => "stack",
            Group => "group",
            Overlay => "overlay",
            Relative => "relative",
        }
    );

    names!(
        /// A shape's kind.
        ShapeType {
            Circle => "circle",
            Rect => "rect",
            Path => "path",
            Line => "line",
        }
    );

    object!(
        /// An axis.
        Axis
    );

    impl Axis {
        /// Its title.
        pub fn title(self, t: impl Into<Title>) -> Axis {
            self.set("title", t.into().into())
        }

        /// Its scale.
        pub fn type_(self, t: AxisType) -> Axis {
            self.set("type", t.into())
        }

        /// The axis it is drawn against (`"x2"`, `"free"`).
        pub fn anchor(self, a: impl AsRef<str>) -> Axis {
            self.set("anchor", a.as_ref().into())
        }

        /// The axis whose range it follows (`"y"`).
        pub fn matches(self, a: impl AsRef<str>) -> Axis {
            self.set("matches", a.as_ref().into())
        }

        /// The part of the figure it spans, `[from, to]` in 0 to 1.
        pub fn domain(self, d: &[f64]) -> Axis {
            self.set("domain", json(d))
        }

        /// Whether its tick labels show.
        pub fn show_tick_labels(self, b: bool) -> Axis {
            self.set("showticklabels", b.into())
        }

        /// Whether the margin grows to its labels.
        pub fn auto_margin(self, b: bool) -> Axis {
            self.set("automargin", b.into())
        }

        /// How a categorical axis orders its values.
        pub fn category_order(self, o: CategoryOrder) -> Axis {
            self.set("categoryorder", o.into())
        }

        /// The order of a categorical axis's values.
        pub fn category_array<T: Serialize>(self, a: Vec<T>) -> Axis {
            self.set("categoryarray", json(a))
        }

        /// The step between ticks (on a log axis, in decades: `log10(2)` for powers of 2).
        pub fn dtick(self, d: f64) -> Axis {
            self.set("dtick", number(d))
        }

        /// Its grid's colour.
        pub fn grid_color(self, c: impl AsRef<str>) -> Axis {
            self.set("gridcolor", c.as_ref().into())
        }

        /// Its line's colour.
        pub fn line_color(self, c: impl AsRef<str>) -> Axis {
            self.set("linecolor", c.as_ref().into())
        }

        /// Its zero line's colour.
        pub fn zero_line_color(self, c: impl AsRef<str>) -> Axis {
            self.set("zerolinecolor", c.as_ref().into())
        }
    }

    object!(
        /// The legend.
        Legend
    );

    impl Legend {
        /// Its title.
        pub fn title(self, t: impl Into<Title>) -> Legend {
            self.set("title", t.into().into())
        }
    }

    object!(
        /// The margins around the plot area, in px.
        Margin
    );

    impl Margin {
        /// Left.
        pub fn left(self, px: usize) -> Margin {
            self.set("l", px.into())
        }

        /// Right.
        pub fn right(self, px: usize) -> Margin {
            self.set("r", px.into())
        }

        /// Top.
        pub fn top(self, px: usize) -> Margin {
            self.set("t", px.into())
        }

        /// Bottom.
        pub fn bottom(self, px: usize) -> Margin {
            self.set("b", px.into())
        }
    }

    object!(
        /// A text placed on the figure.
        Annotation
    );

    impl Annotation {
        /// What it says.
        pub fn text(self, t: impl AsRef<str>) -> Annotation {
            self.set("text", t.as_ref().into())
        }

        /// Where along x (a number, or a category).
        pub fn x<T: Serialize>(self, x: T) -> Annotation {
            self.set("x", json(x))
        }

        /// Where along y.
        pub fn y<T: Serialize>(self, y: T) -> Annotation {
            self.set("y", json(y))
        }

        /// What x is measured against (`"x"`, `"paper"`).
        pub fn x_ref(self, r: impl AsRef<str>) -> Annotation {
            self.set("xref", r.as_ref().into())
        }

        /// What y is measured against.
        pub fn y_ref(self, r: impl AsRef<str>) -> Annotation {
            self.set("yref", r.as_ref().into())
        }

        /// Which of its sides y places.
        pub fn y_anchor(self, a: Anchor) -> Annotation {
            self.set("yanchor", a.into())
        }

        /// Whether an arrow points at (x, y).
        pub fn show_arrow(self, b: bool) -> Annotation {
            self.set("showarrow", b.into())
        }

        /// The arrow's colour.
        pub fn arrow_color(self, c: impl AsRef<str>) -> Annotation {
            self.set("arrowcolor", c.as_ref().into())
        }

        /// Its font.
        pub fn font(self, f: Font) -> Annotation {
            self.set("font", f.into())
        }
    }

    object!(
        /// A shape's outline.
        ShapeLine
    );

    impl ShapeLine {
        /// Its colour.
        pub fn color(self, c: impl AsRef<str>) -> ShapeLine {
            self.set("color", c.as_ref().into())
        }

        /// Its width in px.
        pub fn width(self, px: f64) -> ShapeLine {
            self.set("width", number(px))
        }

        /// Its dash pattern.
        pub fn dash(self, d: DashType) -> ShapeLine {
            self.set("dash", d.into())
        }
    }

    object!(
        /// A line or rectangle drawn on the figure.
        Shape
    );

    impl Shape {
        /// Its kind.
        pub fn shape_type(self, t: ShapeType) -> Shape {
            self.set("type", t.into())
        }

        /// Its name.
        pub fn name(self, n: impl AsRef<str>) -> Shape {
            self.set("name", n.as_ref().into())
        }

        /// What x0 and x1 are measured against.
        pub fn x_ref(self, r: impl AsRef<str>) -> Shape {
            self.set("xref", r.as_ref().into())
        }

        /// What y0 and y1 are measured against.
        pub fn y_ref(self, r: impl AsRef<str>) -> Shape {
            self.set("yref", r.as_ref().into())
        }

        /// Start along x.
        pub fn x0<T: Serialize>(self, v: T) -> Shape {
            self.set("x0", json(v))
        }

        /// End along x.
        pub fn x1<T: Serialize>(self, v: T) -> Shape {
            self.set("x1", json(v))
        }

        /// Start along y.
        pub fn y0<T: Serialize>(self, v: T) -> Shape {
            self.set("y0", json(v))
        }

        /// End along y.
        pub fn y1<T: Serialize>(self, v: T) -> Shape {
            self.set("y1", json(v))
        }

        /// Its fill.
        pub fn fill_color(self, c: impl AsRef<str>) -> Shape {
            self.set("fillcolor", c.as_ref().into())
        }

        /// Its outline.
        pub fn line(self, l: ShapeLine) -> Shape {
            self.set("line", l.into())
        }

        /// Its opacity, 0 to 1.
        pub fn opacity(self, o: f64) -> Shape {
            self.set("opacity", number(o))
        }
    }

    object!(
        /// The layout.
        Layout
    );

    impl Layout {
        /// The figure's title.
        pub fn title(self, t: impl Into<Title>) -> Layout {
            self.set("title", t.into().into())
        }

        /// The legend.
        pub fn legend(self, l: Legend) -> Layout {
            self.set("legend", l.into())
        }

        /// Whether the legend shows.
        pub fn show_legend(self, b: bool) -> Layout {
            self.set("showlegend", b.into())
        }

        /// The margins.
        pub fn margin(self, m: Margin) -> Layout {
            self.set("margin", m.into())
        }

        /// The default font.
        pub fn font(self, f: Font) -> Layout {
            self.set("font", f.into())
        }

        /// The figure's height in px.
        pub fn height(self, px: usize) -> Layout {
            self.set("height", px.into())
        }

        /// What hovering picks.
        pub fn hover_mode(self, m: HoverMode) -> Layout {
            self.set("hovermode", m.into())
        }

        /// How bars share a category.
        pub fn bar_mode(self, m: BarMode) -> Layout {
            self.set("barmode", m.into())
        }

        /// The figure's background.
        pub fn paper_background_color(self, c: impl AsRef<str>) -> Layout {
            self.set("paper_bgcolor", c.as_ref().into())
        }

        /// The plot area's background.
        pub fn plot_background_color(self, c: impl AsRef<str>) -> Layout {
            self.set("plot_bgcolor", c.as_ref().into())
        }

        /// Texts placed on the figure.
        pub fn annotations(self, a: Vec<Annotation>) -> Layout {
            self.set(
                "annotations",
                Value::Array(a.into_iter().map(Value::from).collect()),
            )
        }

        /// Lines and rectangles drawn on the figure.
        pub fn shapes(self, s: Vec<Shape>) -> Layout {
            self.set(
                "shapes",
                Value::Array(s.into_iter().map(Value::from).collect()),
            )
        }

        /// The `n`-th (1-based) x axis: `xaxis`, `xaxis2`, ...
        pub fn x_axis_n(self, n: usize, a: Axis) -> Layout {
            self.set(&axis_key("xaxis", n), a.into())
        }

        /// The `n`-th (1-based) y axis: `yaxis`, `yaxis2`, ...
        pub fn y_axis_n(self, n: usize, a: Axis) -> Layout {
            self.set(&axis_key("yaxis", n), a.into())
        }

        /// The first x axis.
        pub fn x_axis(self, a: Axis) -> Layout {
            self.x_axis_n(1, a)
        }

        /// The first y axis.
        pub fn y_axis(self, a: Axis) -> Layout {
            self.y_axis_n(1, a)
        }

        /// The second x axis.
        pub fn x_axis2(self, a: Axis) -> Layout {
            self.x_axis_n(2, a)
        }

        /// The second y axis.
        pub fn y_axis2(self, a: Axis) -> Layout {
            self.y_axis_n(2, a)
        }
    }

    /// `xaxis`, `xaxis2`, ...: plotly's key of the `n`-th (1-based) axis.
    fn axis_key(base: &str, n: usize) -> String {
        if n <= 1 {
            base.to_owned()
        } else {
            format!("{base}{n}")
        }
    }
}

/// A trace: one set of points and how they are drawn.
pub trait Trace {
    /// The trace's JSON object.
    fn into_json(self: Box<Self>) -> Value;
}

/// The attributes every trace kind below shares.
macro_rules! trace {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name(Map<String, Value>);

        impl Trace for $name {
            fn into_json(self: Box<Self>) -> Value {
                Value::Object(self.0)
            }
        }

        impl $name {
            fn start() -> Map<String, Value> {
                let mut m = Map::new();
                m.insert("type".into(), Value::String($kind.to_owned()));
                m
            }

            fn put(mut self: Box<Self>, key: &str, value: Value) -> Box<Self> {
                self.0.insert(key.to_owned(), value);
                self
            }

            /// Its name in the legend and hover.
            pub fn name(self: Box<Self>, n: impl AsRef<str>) -> Box<Self> {
                self.put("name", n.as_ref().into())
            }

            /// Whether it has a legend entry.
            pub fn show_legend(self: Box<Self>, b: bool) -> Box<Self> {
                self.put("showlegend", b.into())
            }

            /// Traces of one legend group show and hide together.
            pub fn legend_group(self: Box<Self>, g: impl AsRef<str>) -> Box<Self> {
                self.put("legendgroup", g.as_ref().into())
            }

            /// One text per point.
            pub fn text_array<T: Serialize>(self: Box<Self>, t: Vec<T>) -> Box<Self> {
                self.put("text", json(t))
            }

            /// One hover text for all points.
            pub fn hover_text(self: Box<Self>, t: impl AsRef<str>) -> Box<Self> {
                self.put("hovertext", t.as_ref().into())
            }

            /// One hover text per point.
            pub fn hover_text_array<T: Serialize>(self: Box<Self>, t: Vec<T>) -> Box<Self> {
                self.put("hovertext", json(t))
            }

            /// What hovering shows.
            pub fn hover_info(self: Box<Self>, h: common::HoverInfo) -> Box<Self> {
                self.put("hoverinfo", h.into())
            }

            /// The x axis it is drawn on (`"x"`, `"x2"`).
            pub fn x_axis(self: Box<Self>, a: impl AsRef<str>) -> Box<Self> {
                self.put("xaxis", a.as_ref().into())
            }

            /// The y axis it is drawn on.
            pub fn y_axis(self: Box<Self>, a: impl AsRef<str>) -> Box<Self> {
                self.put("yaxis", a.as_ref().into())
            }

            /// Its markers (bars: the bars' fill).
            pub fn marker(self: Box<Self>, m: common::Marker) -> Box<Self> {
                self.put("marker", m.into())
            }

            /// Its opacity, 0 to 1.
            pub fn opacity(self: Box<Self>, o: f64) -> Box<Self> {
                self.put("opacity", number(o))
            }
        }
    };
}

trace!(
    /// Points, lines or both (`scatter`).
    Scatter,
    "scatter"
);

impl Scatter {
    /// Points at `(x[i], y[i])`.
    pub fn new<X: Serialize, Y: Serialize>(x: Vec<X>, y: Vec<Y>) -> Box<Scatter> {
        let mut m = Scatter::start();
        m.insert("x".into(), json(x));
        m.insert("y".into(), json(y));
        Box::new(Scatter(m))
    }

    /// How the points are drawn.
    pub fn mode(self: Box<Self>, m: common::Mode) -> Box<Self> {
        self.put("mode", m.into())
    }

    /// The line through the points.
    pub fn line(self: Box<Self>, l: common::Line) -> Box<Self> {
        self.put("line", l.into())
    }

    /// Where the points' texts sit.
    pub fn text_position(self: Box<Self>, p: common::Position) -> Box<Self> {
        self.put("textposition", p.into())
    }

    /// Error bars along y.
    pub fn error_y(self: Box<Self>, e: common::ErrorData) -> Box<Self> {
        self.put("error_y", e.into())
    }
}

trace!(
    /// Bars (`bar`).
    Bar,
    "bar"
);

impl Bar {
    /// Bars of height `y[i]` at `x[i]`.
    pub fn new<X: Serialize, Y: Serialize>(x: Vec<X>, y: Vec<Y>) -> Box<Bar> {
        let mut m = Bar::start();
        m.insert("x".into(), json(x));
        m.insert("y".into(), json(y));
        Box::new(Bar(m))
    }

    /// Where the bars' texts sit.
    pub fn text_position(self: Box<Self>, p: common::TextPosition) -> Box<Self> {
        self.put("textposition", p.into())
    }
}

trace!(
    /// A grid of coloured cells (`heatmap`).
    HeatMap,
    "heatmap"
);

impl HeatMap {
    /// Cells `z[row][column]` at columns `x` and rows `y`.
    pub fn new<X: Serialize, Y: Serialize, Z: Serialize>(
        x: Vec<X>,
        y: Vec<Y>,
        z: Vec<Z>,
    ) -> Box<HeatMap> {
        let mut m = HeatMap::start();
        m.insert("x".into(), json(x));
        m.insert("y".into(), json(y));
        m.insert("z".into(), json(z));
        Box::new(HeatMap(m))
    }

    /// One hover text per cell, by row.
    pub fn hover_text_matrix<T: Serialize>(self: Box<Self>, t: Vec<Vec<T>>) -> Box<Self> {
        self.put("hovertext", json(t))
    }

    /// The colours from the lowest to the highest value.
    pub fn color_scale(self: Box<Self>, c: common::ColorScale) -> Box<Self> {
        self.put("colorscale", c.into())
    }

    /// The colour bar.
    pub fn color_bar(self: Box<Self>, c: common::ColorBar) -> Box<Self> {
        self.put("colorbar", c.into())
    }

    /// The value at the colour scale's middle.
    pub fn zmid(self: Box<Self>, z: f64) -> Box<Self> {
        self.put("zmid", number(z))
    }
}

/// JSON text of an array of values.
fn array_text(values: &[Value]) -> String {
    serde_json::to_string(values).unwrap_or_else(|_| "[]".to_owned())
}

/// A figure: traces and a layout.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plot {
    data: Vec<Value>,
    layout: Value,
}

impl Plot {
    /// An empty figure.
    pub fn new() -> Plot {
        Plot {
            data: Vec::new(),
            layout: Value::Object(Map::new()),
        }
    }

    /// Adds a trace on top of the others.
    pub fn add_trace(&mut self, t: Box<dyn Trace>) {
        self.data.push(t.into_json());
    }

    /// Adds traces in order.
    pub fn add_traces(&mut self, ts: Vec<Box<dyn Trace>>) {
        self.data.extend(ts.into_iter().map(Trace::into_json));
    }

    /// Sets the layout.
    pub fn set_layout(&mut self, l: layout::Layout) {
        self.layout = l.into();
    }

    /// The figure as plotly.js takes it: `{"data": [...], "layout": {...}, "config": {}}`.
    pub fn to_json(&self) -> String {
        let data = array_text(&self.data);
        format!(
            r#"{{"data":{data},"layout":{},"config":{{}}}}"#,
            self.layout
        )
    }
}
