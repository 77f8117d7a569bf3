//! Small bridges to the browser that several parts of the explorer use: yielding to the event
//! loop so the page paints, the user's colour scheme, saving text as a file, JS error text and
//! file sizes as people read them.

use wasm_bindgen_futures::JsFuture;

/// Lets the browser paint (e.g. the progress indicator) before a long synchronous step.
pub async fn yield_to_browser() {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// Resolves at the next animation frame, so what was just rendered gets painted.
pub async fn next_frame() {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        if let Some(w) = web_sys::window() {
            let _ = w.request_animation_frame(&resolve);
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// Moves the keyboard focus to the first element matching `selector`, if there is one.
pub fn focus_selector(selector: &str) {
    let element = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(selector).ok().flatten())
        .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok());
    if let Some(e) = element {
        let _ = e.focus();
    }
}

/// Whether the user's system asks for a dark colour scheme.
pub fn prefers_dark() -> bool {
    web_sys::window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}

/// The message of a JS error value.
pub fn js_error_text(e: &wasm_bindgen::JsValue) -> String {
    js_sys::Reflect::get(e, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Saves text as a file through a temporary object URL.
pub fn download(name: &str, mime: &str, text: &str) {
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    let anchor = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("a").ok())
        .and_then(|a| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlAnchorElement>(a).ok());
    if let Some(a) = anchor {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// `1.2 MB`-style size.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// A node of a document read by the browser's own `JSON.parse`: the page's side of
/// [`crate::share::JsonTree`], so the index and link readers run on the page without a JSON
/// reader compiled into it.
#[derive(Clone, Debug)]
pub struct JsJson(wasm_bindgen::JsValue);

impl JsJson {
    /// Parses `bytes` (UTF-8 JSON text), or says why it is not JSON.
    pub fn parse(bytes: &[u8]) -> Result<JsJson, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"))?;
        js_sys::JSON::parse(text)
            .map(JsJson)
            .map_err(|e| js_error_text(&e))
    }

    /// This node as an object (not an array), if it is one.
    fn object(&self) -> Option<&js_sys::Object> {
        use wasm_bindgen::JsCast;
        if js_sys::Array::is_array(&self.0) {
            return None;
        }
        self.0
            .dyn_ref::<js_sys::Object>()
            .filter(|_| self.0.is_object())
    }
}

impl crate::share::JsonTree for JsJson {
    fn field(&self, key: &str) -> Option<Self> {
        let key = wasm_bindgen::JsValue::from_str(key);
        // Own fields only: `constructor` and the like come from the prototype.
        let obj = self.object().filter(|o| o.has_own_property(&key))?;
        js_sys::Reflect::get(obj, &key).ok().map(JsJson)
    }

    fn keys(&self) -> Option<Vec<String>> {
        let obj = self.object()?;
        Some(
            js_sys::Object::keys(obj)
                .iter()
                .filter_map(|k| k.as_string())
                .collect(),
        )
    }

    fn items(&self) -> Option<Vec<Self>> {
        js_sys::Array::is_array(&self.0)
            .then(|| js_sys::Array::from(&self.0).iter().map(JsJson).collect())
    }

    fn is_array(&self) -> bool {
        js_sys::Array::is_array(&self.0)
    }

    fn text(&self) -> Option<String> {
        self.0.as_string()
    }

    fn number(&self) -> Option<f64> {
        self.0.as_f64()
    }

    fn to_json_text(&self) -> String {
        js_sys::JSON::stringify(&self.0)
            .ok()
            .and_then(|s| s.as_string())
            .unwrap_or_default()
    }
}
