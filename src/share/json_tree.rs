//! What the link and index readers need of a parsed JSON document, so one reader serves both
//! sides: natively (the CLI, the tests) the document is serde_json's [`Value`]; on the page it
//! is the browser's own `JSON.parse` result (`app::browser::JsJson`), so the page carries no
//! JSON reader of its own (serde_json's is in the parse worker, beside the other readers).
//!
//! A tree is a cheap handle to one node: fields and items are handles too, and text is copied
//! out only when asked for.

use serde_json::Value;

/// A node of a parsed JSON document.
pub trait JsonTree: Sized {
    /// The value of `key` when this is an object that has it.
    fn field(&self, key: &str) -> Option<Self>;
    /// The object's keys, when this is an object.
    fn keys(&self) -> Option<Vec<String>>;
    /// The items, when this is an array.
    fn items(&self) -> Option<Vec<Self>>;
    /// Whether this is an array (without handing out its items).
    fn is_array(&self) -> bool;
    /// The text, when this is a string.
    fn text(&self) -> Option<String>;
    /// The number, when this is one.
    fn number(&self) -> Option<f64>;
    /// This node written back as JSON text.
    fn to_json_text(&self) -> String;
}

impl JsonTree for &Value {
    fn field(&self, key: &str) -> Option<Self> {
        self.get(key)
    }

    fn keys(&self) -> Option<Vec<String>> {
        self.as_object().map(|o| o.keys().cloned().collect())
    }

    fn items(&self) -> Option<Vec<Self>> {
        self.as_array().map(|a| a.iter().collect())
    }

    fn is_array(&self) -> bool {
        Value::is_array(self)
    }

    fn text(&self) -> Option<String> {
        self.as_str().map(str::to_string)
    }

    fn number(&self) -> Option<f64> {
        self.as_f64()
    }

    fn to_json_text(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}
