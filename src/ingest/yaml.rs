//! The YAML that tools write when they dump a JSON-like report (guidellm's `benchmarks.yaml`,
//! PyYAML's and serde's block style), read into the JSON values the same report holds as
//! JSON, so one reader serves both.
//!
//! What is read: block mappings and sequences (a sequence may sit at its key's indent, as
//! PyYAML writes it), plain, single- and double-quoted scalars (continued on more-indented
//! lines), `|` and `>` block scalars, flow collections (`[]`, `{a: 1}`), comments, and one
//! document (`---` to `...`). What is refused, with the line: anchors and aliases, tags
//! (`!!python/object`), complex keys (`? `), tabs in indentation. A full YAML parser (the
//! serde_yaml_ng crate) would add about 50 KB to the parse worker's wasm
//! (docs/formats.md); reports need only this.
//!
//! Plain scalars resolve as YAML 1.2's core schema does: `null`/`~`/empty, `true`/`false`,
//! integers, floats; `.inf`, `-.inf` and `.nan` become the strings `"inf"`, `"-inf"`,
//! `"NaN"`, which the readers take as numbers (as they take JSON's bare `Infinity`).

use serde_json::{Map, Number, Value};

/// Why a text could not be read as YAML, with the 1-based line.
#[derive(Debug, PartialEq)]
pub(crate) struct YamlError {
    pub line: usize,
    pub message: String,
}

#[derive(Clone, Copy)]
struct Line<'a> {
    no: usize,
    indent: usize,
    text: &'a str,
}

type Parsed<T> = Result<T, YamlError>;

/// Deepest nesting read (serde_json's limit): deeper input is refused with its line rather
/// than recursed into until the stack runs out.
const MAX_DEPTH: usize = 128;

fn fail<T>(line: usize, message: impl Into<String>) -> Parsed<T> {
    Err(YamlError {
        line,
        message: message.into(),
    })
}

/// The text's first document as a JSON value.
pub(crate) fn parse(text: &str) -> Parsed<Value> {
    let mut lines = Vec::new();
    let mut started = false;
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let trimmed = raw.trim_end();
        let body = trimmed.trim_start_matches(' ');
        if body.starts_with('\t') {
            return fail(no, "tab in indentation");
        }
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        if body == "---" || body.starts_with("--- ") {
            if started {
                break;
            }
            started = true;
            continue;
        }
        if body == "..." {
            break;
        }
        if body.starts_with('%') && !started {
            continue;
        }
        started = true;
        lines.push(Line {
            no,
            indent: trimmed.len() - body.len(),
            text: body,
        });
    }
    let mut p = Parser {
        lines,
        pos: 0,
        depth: 0,
    };
    if p.lines.is_empty() {
        return Ok(Value::Null);
    }
    let indent = p.lines[0].indent;
    let v = p.node(indent)?;
    if let Some(l) = p.lines.get(p.pos) {
        return fail(l.no, "unexpected indentation");
    }
    Ok(v)
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    pos: usize,
    /// Nodes being read, outermost first.
    depth: usize,
}

fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// Where a mapping entry's key ends (the `:`) and where its value starts, outside quotes.
fn key_split(text: &str, no: usize) -> Parsed<Option<(String, &str)>> {
    let (key, rest) = match text.as_bytes().first() {
        Some(b'"' | b'\'') => {
            let (k, used) = quoted(text, no)?;
            let rest = text[used..].trim_start();
            match rest.strip_prefix(':') {
                Some(r) if r.is_empty() || r.starts_with(' ') => (k, r),
                _ => return Ok(None),
            }
        }
        Some(b'?') if text == "?" || text.starts_with("? ") => {
            return fail(no, "complex keys (`? `) are not read")
        }
        _ => {
            let at = text
                .find(": ")
                .or_else(|| text.ends_with(':').then(|| text.len() - 1));
            match at {
                Some(i) if !text.starts_with(['[', '{']) => {
                    (text[..i].trim_end().to_string(), &text[i + 1..])
                }
                _ => return Ok(None),
            }
        }
    };
    Ok(Some((key, strip_comment(rest.trim_start()))))
}

/// A plain value without its trailing ` # comment`.
fn strip_comment(v: &str) -> &str {
    if v.starts_with(['"', '\'']) {
        return v;
    }
    match v.find(" #") {
        Some(i) => v[..i].trim_end(),
        None => v,
    }
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<Line<'a>> {
        self.lines.get(self.pos).copied()
    }

    /// The node starting at the current line, whose indent is `indent`.
    fn node(&mut self, indent: usize) -> Parsed<Value> {
        if self.depth >= MAX_DEPTH {
            let no = self.peek().map_or(0, |l| l.no);
            return fail(no, format!("nested deeper than {MAX_DEPTH} levels"));
        }
        self.depth += 1;
        let v = self.node_inner(indent);
        self.depth -= 1;
        v
    }

    fn node_inner(&mut self, indent: usize) -> Parsed<Value> {
        let Some(l) = self.peek() else {
            return Ok(Value::Null);
        };
        if l.indent < indent {
            return Ok(Value::Null);
        }
        if is_item(l.text) {
            return self.sequence(l.indent);
        }
        if key_split(l.text, l.no)?.is_some() {
            return self.mapping(l.indent);
        }
        self.pos += 1;
        self.scalar(l.text, l.no, l.indent)
    }

    fn mapping(&mut self, indent: usize) -> Parsed<Value> {
        let mut map = Map::new();
        while let Some(l) = self.peek() {
            if l.indent != indent || is_item(l.text) {
                if l.indent > indent {
                    return fail(l.no, "unexpected indentation");
                }
                break;
            }
            let Some((key, rest)) = key_split(l.text, l.no)? else {
                return fail(l.no, "expected `key: value`");
            };
            self.pos += 1;
            let value = if rest.is_empty() {
                match self.peek() {
                    Some(n) if n.indent > indent => self.node(n.indent)?,
                    Some(n) if n.indent == indent && is_item(n.text) => self.sequence(indent)?,
                    _ => Value::Null,
                }
            } else {
                self.scalar(rest, l.no, indent)?
            };
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }

    fn sequence(&mut self, indent: usize) -> Parsed<Value> {
        let mut items = Vec::new();
        while let Some(l) = self.peek() {
            if l.indent != indent || !is_item(l.text) {
                if l.indent > indent {
                    return fail(l.no, "unexpected indentation");
                }
                break;
            }
            let rest = l.text[1..].trim_start();
            let inner = indent + (l.text.len() - rest.len());
            if rest.is_empty() {
                self.pos += 1;
                items.push(match self.peek() {
                    Some(n) if n.indent > indent => self.node(n.indent)?,
                    _ => Value::Null,
                });
            } else if is_item(rest) || key_split(rest, l.no)?.is_some() {
                // `- key: value` / `- - x`: the rest of the line opens a node at its column.
                self.lines[self.pos] = Line {
                    no: l.no,
                    indent: inner,
                    text: rest,
                };
                items.push(self.node(inner)?);
            } else {
                self.pos += 1;
                items.push(self.scalar(rest, l.no, indent)?);
            }
        }
        Ok(Value::Array(items))
    }

    /// A scalar starting with `first` on line `no`, continued on the lines indented more than
    /// `indent`.
    fn scalar(&mut self, first: &str, no: usize, indent: usize) -> Parsed<Value> {
        let first = first.trim();
        if first.starts_with(['&', '*']) {
            return fail(no, "anchors and aliases are not read");
        }
        if first.starts_with('!') {
            return fail(no, "tags are not read");
        }
        if let Some(style) = first.strip_prefix(['|', '>']) {
            let folded = first.starts_with('>');
            return Ok(Value::String(self.block_scalar(folded, style, indent)));
        }
        // Continuation lines (a plain value cannot hold `key: value`).
        let quoted_or_flow = first.starts_with(['"', '\'', '[', '{']);
        let mut text = first.to_string();
        while let Some(n) = self.peek() {
            if n.indent <= indent {
                break;
            }
            if !quoted_or_flow && (is_item(n.text) || key_split(n.text, n.no)?.is_some()) {
                return fail(n.no, "unexpected indentation");
            }
            text.push(' ');
            text.push_str(n.text);
            self.pos += 1;
        }
        match text.as_bytes().first() {
            Some(b'"' | b'\'') => {
                let (s, used) = quoted(&text, no)?;
                if !strip_comment(text[used..].trim()).is_empty() {
                    return fail(no, "text after a quoted value");
                }
                Ok(Value::String(s))
            }
            Some(b'[' | b'{') => {
                let mut f = Flow {
                    b: text.as_bytes(),
                    at: 0,
                    no,
                    depth: 0,
                };
                let v = f.value()?;
                f.ws();
                if f.at < f.b.len() {
                    return fail(no, "text after a flow collection");
                }
                Ok(v)
            }
            _ => Ok(plain(strip_comment(&text))),
        }
    }

    /// A `|` (literal) or `>` (folded) block scalar: the more-indented lines below.
    fn block_scalar(&mut self, folded: bool, style: &str, indent: usize) -> String {
        let mut parts: Vec<&str> = Vec::new();
        let mut base = None;
        while let Some(n) = self.peek() {
            if n.indent <= indent {
                break;
            }
            base.get_or_insert(n.indent);
            parts.push(n.text);
            self.pos += 1;
        }
        let sep = if folded { " " } else { "\n" };
        let mut s = parts.join(sep);
        if !style.starts_with('-') && !s.is_empty() {
            s.push('\n');
        }
        s
    }
}

/// A quoted scalar at the start of `text`: its value and the bytes it used.
fn quoted(text: &str, no: usize) -> Parsed<(String, usize)> {
    let mut chars = text.char_indices();
    let Some((_, q)) = chars.next() else {
        return fail(no, "empty quoted value");
    };
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' if q == '\'' => {
                if text[i + 1..].starts_with('\'') {
                    out.push('\'');
                    chars.next();
                } else {
                    return Ok((out, i + 1));
                }
            }
            '"' if q == '"' => return Ok((out, i + 1)),
            '\\' if q == '"' => match chars.next().map(|(_, e)| e) {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('0') => out.push('\0'),
                Some(' ') => out.push(' '),
                Some('/') => out.push('/'),
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some(e @ ('x' | 'u' | 'U')) => {
                    let len = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex: String = (0..len)
                        .filter_map(|_| chars.next().map(|(_, h)| h))
                        .collect();
                    match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        Some(ch) => out.push(ch),
                        None => return fail(no, "bad escape in a quoted value"),
                    }
                }
                _ => return fail(no, "bad escape in a quoted value"),
            },
            c => out.push(c),
        }
    }
    fail(no, "quoted value never closed")
}

/// A plain scalar resolved as YAML 1.2's core schema does.
fn plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Value::String("inf".into())
        }
        "-.inf" | "-.Inf" | "-.INF" => return Value::String("-inf".into()),
        ".nan" | ".NaN" | ".NAN" => return Value::String("NaN".into()),
        _ => {}
    }
    let numeric = s
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        && s.bytes().any(|b| b.is_ascii_digit());
    if numeric {
        if let Ok(i) = s.parse::<i64>() {
            return Value::Number(i.into());
        }
        if let Some(n) = s.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(n);
        }
    }
    Value::String(s.to_string())
}

/// A flow collection (`[a, b]`, `{a: 1, b: [2]}`) on one logical line.
struct Flow<'b> {
    b: &'b [u8],
    at: usize,
    no: usize,
    /// Collections being read, outermost first.
    depth: usize,
}

impl Flow<'_> {
    fn ws(&mut self) {
        while self.b.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Parsed<Value> {
        if self.depth >= MAX_DEPTH {
            return fail(self.no, format!("nested deeper than {MAX_DEPTH} levels"));
        }
        self.depth += 1;
        let v = self.value_inner();
        self.depth -= 1;
        v
    }

    fn value_inner(&mut self) -> Parsed<Value> {
        self.ws();
        match self.b.get(self.at) {
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    self.ws();
                    if self.b.get(self.at) == Some(&b']') {
                        self.at += 1;
                        return Ok(Value::Array(items));
                    }
                    items.push(self.value()?);
                    self.ws();
                    match self.b.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b']') => {}
                        _ => return fail(self.no, "flow sequence never closed"),
                    }
                }
            }
            Some(b'{') => {
                self.at += 1;
                let mut map = Map::new();
                loop {
                    self.ws();
                    if self.b.get(self.at) == Some(&b'}') {
                        self.at += 1;
                        return Ok(Value::Object(map));
                    }
                    let key = match self.value()? {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    self.ws();
                    if self.b.get(self.at) != Some(&b':') {
                        return fail(self.no, "expected `:` in a flow mapping");
                    }
                    self.at += 1;
                    let v = self.value()?;
                    map.insert(key, v);
                    self.ws();
                    match self.b.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {}
                        _ => return fail(self.no, "flow mapping never closed"),
                    }
                }
            }
            Some(b'"' | b'\'') => {
                let rest = std::str::from_utf8(&self.b[self.at..]).unwrap_or_default();
                let (s, used) = quoted(rest, self.no)?;
                self.at += used;
                Ok(Value::String(s))
            }
            Some(_) => {
                let start = self.at;
                while let Some(&c) = self.b.get(self.at) {
                    if matches!(c, b',' | b']' | b'}')
                        || (c == b':'
                            && self.b.get(self.at + 1).is_none_or(u8::is_ascii_whitespace))
                    {
                        break;
                    }
                    self.at += 1;
                }
                let s = std::str::from_utf8(&self.b[start..self.at]).unwrap_or_default();
                Ok(plain(s.trim()))
            }
            None => fail(self.no, "flow collection never closed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deep_nesting_is_refused_with_its_line_not_recursed_into() {
        let flow = format!("a: {}1{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let e = parse(&flow).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("nested deeper"), "{}", e.message);
        let block: String = (0..1_000)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect();
        let e = parse(&block).unwrap_err();
        assert!(e.message.contains("nested deeper"), "{}", e.message);
        assert_eq!(e.line, MAX_DEPTH + 1);
    }

    #[test]
    fn pyyaml_block_style_reads_as_its_json() {
        let text = "\
# a report
metadata:
  version: 1
  guidellm_version: 0.5.0.dev0
args:
  data:
  - /root/aime_2024_v2.jsonl
  rate: null
  outputs: [json, html]
  extra: {}
  warmup: 0.1
  name: 'it''s'
  url: \"http://0.0.0.0:8000\\n\"
benchmarks:
- type_: generative_benchmark
  config:
    strategy:
      type_: synchronous
      max_concurrency: 1
  metrics:
    request_latency:
      successful:
        mean: 12.5
        percentiles: {p50: 12.0, p99: 20}
- type_: generative_benchmark
  rate: .inf
  long: this plain value
    goes on
  text: |
    line one
    line two
  list:
    - - 1
      - 2
    -
      k: v
";
        let v = parse(text).unwrap();
        assert_eq!(
            v,
            json!({
                "metadata": {"version": 1, "guidellm_version": "0.5.0.dev0"},
                "args": {"data": ["/root/aime_2024_v2.jsonl"], "rate": null,
                         "outputs": ["json", "html"], "extra": {}, "warmup": 0.1,
                         "name": "it's", "url": "http://0.0.0.0:8000\n"},
                "benchmarks": [
                    {"type_": "generative_benchmark",
                     "config": {"strategy": {"type_": "synchronous", "max_concurrency": 1}},
                     "metrics": {"request_latency": {"successful": {"mean": 12.5,
                         "percentiles": {"p50": 12.0, "p99": 20}}}}},
                    {"type_": "generative_benchmark", "rate": "inf",
                     "long": "this plain value goes on", "text": "line one\nline two\n",
                     "list": [[1, 2], {"k": "v"}]}
                ]
            })
        );
    }

    #[test]
    fn what_is_not_read_says_its_line() {
        assert_eq!(parse("a: &x 1\nb: *x\n").unwrap_err().line, 1);
        assert_eq!(parse("a:\n  b: !!python/tuple [1]\n").unwrap_err().line, 2);
        assert_eq!(parse("? [a]\n: 1\n").unwrap_err().line, 1);
        assert_eq!(parse("a: 1\n   b: 2\n").unwrap_err().line, 2);
        assert_eq!(parse("a: \"open\n").unwrap_err().line, 1);
        assert_eq!(parse("a: [1, 2\n").unwrap_err().line, 1);
        assert_eq!(parse("\ta: 1\n").unwrap_err().line, 1);
    }
}
