//! Small pieces several views draw the same way: menu options, menus over a fixed set of
//! choices kept in the address, text boxes kept in the address, the Markdown export box and
//! the "every row" notes line.

use leptos::prelude::*;

use super::state::AppState;

/// One `<option>` per `(value, label)`; the one whose value is `current` is selected.
pub fn options(items: impl IntoIterator<Item = (String, String)>, current: &str) -> AnyView {
    items
        .into_iter()
        .map(|(value, label)| {
            let selected = value == current;
            view! { <option value=value selected=selected>{label}</option> }
        })
        .collect_view()
        .into_any()
}

/// A fixed set of choices for one setting of a view, named in the address as `v.<param>`.
#[derive(Clone, Copy)]
pub struct ChoiceMenu<T: 'static> {
    /// The `<select>` element's id.
    pub id: &'static str,
    /// The setting's name in the address.
    pub param: &'static str,
    /// Every choice, in menu order.
    pub choices: &'static [T],
    /// A choice's value in the menu and the address.
    pub value_of: fn(&T) -> String,
    /// A choice's text in the menu.
    pub label_of: fn(&T) -> String,
}

impl<T: Copy + PartialEq + Send + Sync + 'static> ChoiceMenu<T> {
    /// The choice the address names, or `default`.
    pub fn initial(&self, state: AppState, default: T) -> T {
        state
            .param(self.param)
            .and_then(|v| self.find(&v))
            .unwrap_or(default)
    }

    fn find(&self, value: &str) -> Option<T> {
        self.choices
            .iter()
            .copied()
            .find(|c| (self.value_of)(c) == value)
    }

    /// The `<select>`: a change sets `chosen` and records it in the address.
    pub fn view(self, state: AppState, chosen: RwSignal<T>) -> impl IntoView {
        let current = (self.value_of)(&chosen.get_untracked());
        let items = self
            .choices
            .iter()
            .map(move |c| ((self.value_of)(c), (self.label_of)(c)));
        view! {
            <select id=self.id on:change=move |ev| {
                let v = event_target_value(&ev);
                if let Some(c) = self.find(&v) {
                    chosen.set(c);
                    state.set_param(self.param, v);
                }
            }>
                {options(items, &current)}
            </select>
        }
    }
}

/// A folded box with a table's Markdown, to paste into a pull request.
pub fn markdown_export(id: Option<&'static str>, rows: u32, markdown: String) -> impl IntoView {
    view! {
        <details class="export">
            <summary>"Markdown for a pull request"</summary>
            <textarea id=id readonly rows=rows>{markdown}</textarea>
        </details>
    }
}

/// A text box whose text the address keeps under `param`: set when the text changes (Enter
/// or leaving the box), so a view's typed settings travel with its link.
pub fn param_input(
    state: AppState,
    id: &'static str,
    param: &'static str,
    size: &'static str,
    placeholder: String,
    value: RwSignal<String>,
) -> impl IntoView {
    view! {
        <input id=id size=size placeholder=placeholder prop:value=move || value.get()
            on:change=move |ev| {
                let v = event_target_value(&ev);
                state.set_param(param, v.clone());
                value.set(v);
            }/>
    }
}

/// "Every row: …." for the data-quality notes that hold for every row of a table, or nothing.
pub fn shared_notes(id: &'static str, shared: &[String]) -> impl IntoView {
    (!shared.is_empty()).then(|| {
        let text = format!("Every row: {}.", shared.join("; "));
        view! { <p class="muted" id=id>{text}</p> }
    })
}
