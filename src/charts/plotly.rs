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

pub mod common;
pub mod layout;

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

            /// Error bars along y.
            pub fn error_y(self: Box<Self>, e: common::ErrorData) -> Box<Self> {
                self.put("error_y", e.into())
            }

            /// Error bars along y, when there are any.
            pub fn error_y_if(self: Box<Self>, e: Option<common::ErrorData>) -> Box<Self> {
                match e {
                    Some(e) => self.error_y(e),
                    None => self,
                }
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

    /// Whether the colour bar is shown.
    pub fn show_scale(self: Box<Self>, b: bool) -> Box<Self> {
        self.put("showscale", Value::Bool(b))
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
    /// The figure of a plotly document `{"data": [...], "layout": {...}}` (a missing part is
    /// empty).
    pub fn of_figure(doc: Value) -> Plot {
        let mut plot = Plot::new();
        if let Value::Object(mut m) = doc {
            if let Some(Value::Array(data)) = m.remove("data") {
                plot.data = data;
            }
            if let Some(layout @ Value::Object(_)) = m.remove("layout") {
                plot.layout = layout;
            }
        }
        plot
    }

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

    /// Adds `other`'s traces on top of these (its layout is not used).
    pub fn append(&mut self, mut other: Plot) {
        self.data.append(&mut other.data);
    }

    /// Sets the layout.
    pub fn set_layout(&mut self, l: layout::Layout) {
        self.layout = l.into();
    }

    /// The figure as plotly.js takes it: `{"data": [...], "layout": {...}, "config": {}}`.
    pub fn to_json(&self) -> String {
        let data = array_text(&self.data);
        // `to_string`, not `Display` (`{}`): one serde_json writer for the page's JSON text,
        // where each writer type is another copy of the serialiser in the wasm.
        let layout = serde_json::to_string(&self.layout).unwrap_or_else(|_| "{}".to_owned());
        format!(r#"{{"data":{data},"layout":{layout},"config":{{}}}}"#)
    }

    /// The figure's JSON text with its layout fitted ([`super::fit`]) to a chart `width_px`
    /// wide when known: what the page hands plotly.js. The same figure as
    /// [`Plot::to_json`] fitted ([`super::fit::fit_figure_value`]), without writing the
    /// figure out and reading it back (so the page carries no JSON reader for it).
    pub fn to_fitted_json(&self, width_px: Option<f64>) -> String {
        let mut doc = Map::new();
        doc.insert("data".into(), Value::Array(self.data.clone()));
        doc.insert("layout".into(), self.layout.clone());
        let mut doc = Value::Object(doc);
        super::fit::fit_figure_value(&mut doc, width_px);
        serde_json::to_string(&doc).unwrap_or_else(|_| self.to_json())
    }
}
