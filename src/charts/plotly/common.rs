//! Attributes shared by traces and the layout: modes, markers, lines, fonts, titles, colour scales.

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
