//! The layout: axes, legend, margins, annotations and shapes.

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
