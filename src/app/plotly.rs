//! The bridge to plotly.js (served from the npm package next to the app, never a CDN): a chart
//! spec from [`crate::charts`] goes in, `Plotly.react` draws or updates it in place; a figure
//! plotly.js refuses comes back as an error the view shows ([`error_note`]).

use leptos::prelude::*;
use wasm_bindgen::prelude::*;

use crate::charts::plotly::Plot;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = Plotly, js_name = react)]
    fn plotly_react(
        div: &web_sys::HtmlElement,
        data: &JsValue,
        layout: &JsValue,
        config: &JsValue,
    ) -> Result<js_sys::Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = Plotly, js_name = downloadImage)]
    fn plotly_download_image(
        div: &web_sys::HtmlElement,
        options: &JsValue,
    ) -> Result<js_sys::Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = Plotly, js_name = purge)]
    fn plotly_purge(div: &web_sys::HtmlElement) -> Result<(), JsValue>;
}

/// What the views say when plotly.js is missing from the page.
const NOT_LOADED: &str = "plotly.js did not load; charts cannot be drawn";

/// Whether plotly.js is on the page.
pub fn available() -> bool {
    let global = js_sys::global();
    js_sys::Reflect::get(&global, &JsValue::from_str("Plotly"))
        .map(|v| !v.is_undefined())
        .unwrap_or(false)
}

/// Draws (or redraws in place) `figure`, with its layout fitted to real data first
/// ([`crate::charts::fit`]).
pub fn react(div: &web_sys::HtmlElement, figure: &Plot) -> Result<(), String> {
    react_drawn(div, figure).map(|_| ())
}

/// [`react`], with plotly.js's promise of the finished drawing.
fn react_drawn(div: &web_sys::HtmlElement, figure: &Plot) -> Result<js_sys::Promise, String> {
    if !available() {
        return Err(NOT_LOADED.into());
    }
    let width = Some(f64::from(div.client_width())).filter(|w| *w > 0.0);
    let fitted = figure.to_fitted_json(width);
    let figure = js_sys::JSON::parse(&fitted).map_err(|e| format!("{e:?}"))?;
    let get =
        |k: &str| js_sys::Reflect::get(&figure, &JsValue::from_str(k)).unwrap_or(JsValue::NULL);
    // The config goes with a div's first drawing only: plotly keeps it, and given again it
    // rebuilds and compares its whole context on every redraw (a few ms of each filter click).
    let drawn = js_sys::Reflect::get(div, &"_fullLayout".into()).is_ok_and(|l| l.is_object());
    let config = if drawn {
        JsValue::UNDEFINED
    } else {
        let config = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&config, &"responsive".into(), &JsValue::TRUE);
        let _ = js_sys::Reflect::set(&config, &"displaylogo".into(), &JsValue::FALSE);
        config.into()
    };
    plotly_react(div, &get("data"), &get("layout"), &config)
        .map_err(|e| format!("plotly.js refused the chart: {e:?}"))
}

/// Saves the chart as an image file (`png` or `svg`) through plotly.js's own export.
pub fn download_image(
    div: &web_sys::HtmlElement,
    format: &str,
    filename: &str,
) -> Result<(), String> {
    if !available() {
        return Err(NOT_LOADED.into());
    }
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"format".into(), &format.into());
    let _ = js_sys::Reflect::set(&options, &"filename".into(), &filename.into());
    let _ = js_sys::Reflect::set(&options, &"width".into(), &JsValue::from(1200));
    let _ = js_sys::Reflect::set(&options, &"height".into(), &JsValue::from(600));
    plotly_download_image(div, &options)
        .map(|_| ())
        .map_err(|e| format!("plotly.js could not export the chart: {e:?}"))
}

/// Draws `figure` into the element behind `node`, or clears it when there is no
/// figure. The error, if plotly.js refuses the figure, is for the view to show.
pub fn draw(node: NodeRef<leptos::html::Div>, figure: Option<&Plot>) -> Result<(), String> {
    let Some(div) = node.get() else {
        return Ok(());
    };
    match figure {
        Some(f) => react(&div, f),
        None => {
            purge(&div);
            Ok(())
        }
    }
}

/// Draws `figure()` into `node` whenever what it reads changes, and returns the drawing's
/// error for [`error_note`]: the one effect every single-chart view sets up.
pub fn draw_when(
    node: NodeRef<leptos::html::Div>,
    figure: impl Fn() -> Option<Plot> + 'static,
) -> RwSignal<Option<String>> {
    let error = RwSignal::new(None::<String>);
    Effect::new(move |_| error.set(draw(node, figure().as_ref()).err()));
    error
}

/// A chart's drawing error, shown above it, or nothing.
pub fn error_note(error: RwSignal<Option<String>>) -> impl IntoView {
    move || {
        error
            .get()
            .map(|e| view! { <p class="error chart-error">{e}</p> })
    }
}

/// Clears the chart behind `node`, if it is mounted.
pub fn purge_node(node: NodeRef<leptos::html::Div>) {
    if let Some(div) = node.get_untracked() {
        purge(&div);
    }
}

/// The first drawn chart (a `.chart` element plotly has drawn into) that is shown on the page:
/// the one the user sees, whichever view drew it.
pub fn shown_chart() -> Option<web_sys::HtmlElement> {
    let charts = web_sys::window()?
        .document()?
        .get_elements_by_class_name("chart");
    (0..charts.length())
        .filter_map(|i| charts.item(i)?.dyn_into::<web_sys::HtmlElement>().ok())
        .find(|el| {
            el.offset_parent().is_some()
                && js_sys::Reflect::get(el, &JsValue::from_str("data"))
                    .is_ok_and(|d| js_sys::Array::is_array(&d))
        })
}

/// Releases a chart's resources.
pub fn purge(div: &web_sys::HtmlElement) {
    if available() {
        let _ = plotly_purge(div);
    }
}

/// Draws [`crate::views::chart::warm_up_figures`] one at a time (a task each) into an element
/// off-screen, then removes it: plotly.js's one-time start (compiling its drawing code) then
/// happens while the page is idle rather than in the first chart of a dropped file. Stops
/// as soon as `busy()` (a file on its way: its chart warms plotly.js up itself).
pub async fn warm_up(dark: bool, busy: impl Fn() -> bool) {
    let theme = if dark {
        crate::charts::Theme::Dark
    } else {
        crate::charts::Theme::Light
    };
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    for figure in crate::views::chart::warm_up_figures(theme) {
        super::browser::yield_to_browser().await;
        if busy() {
            return;
        }
        let (Some(body), Some(div)) = (
            document.body(),
            document
                .create_element("div")
                .ok()
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()),
        ) else {
            return;
        };
        let _ = div.set_attribute(
            "style",
            "position:absolute;left:-10000px;top:0;width:1000px;height:460px",
        );
        let _ = div.set_attribute("aria-hidden", "true");
        let _ = body.append_child(&div);
        // A refused figure only means less warm-up.
        if let Ok(drawn) = react_drawn(&div, &figure) {
            let _ = wasm_bindgen_futures::JsFuture::from(drawn).await;
        }
        purge(&div);
        div.remove();
    }
}
