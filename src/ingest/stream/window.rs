//! The streamed JSON reader's window on its input ([`Window`]): the unread part, refilled a
//! chunk at a time, and the steps that read a serving run's object from it without holding the
//! whole text (keys, scalars, per-request number arrays into columns, `itls` set apart).

use super::*;

/// The unread part of the input: `buf[pos..]`, refilled a chunk at a time, the read part
/// dropped as it goes.
pub(super) struct Window<'g, R> {
    pub(super) input: R,
    pub(super) chunk: usize,
    pub(super) buf: Vec<u8>,
    pub(super) pos: usize,
    pub(super) eof: bool,
    /// Where an `itls` array's lists go, when set apart ([`read_json_stream_columns`]).
    pub(super) gaps: Option<&'g mut dyn SetApart>,
    /// The length of the first per-request array read: the others are as long, so their
    /// vectors start that large rather than doubling (and leaving the halves behind).
    pub(super) hint: usize,
    /// One request's gaps as they are read, before they are copied to where they go.
    pub(super) scratch: Vec<f64>,
}

/// `None` from a step: the content is not the plain case (or not JSON at all).
type Step<T> = std::io::Result<Option<T>>;

impl<R: BufRead> Window<'_, R> {
    /// Reads one more chunk; false at the end of the input.
    pub(super) fn more(&mut self) -> std::io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 && self.pos >= self.buf.len() / 2 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        let have = self.buf.len();
        let mut got = 0;
        while got < self.chunk {
            let chunk = self.input.fill_buf()?;
            if chunk.is_empty() {
                self.eof = true;
                break;
            }
            let n = chunk.len().min(self.chunk - got);
            self.buf.extend_from_slice(&chunk[..n]);
            self.input.consume(n);
            got += n;
        }
        Ok(self.buf.len() > have)
    }

    /// The next byte that is not whitespace, left unread; `None` at the end.
    pub(super) fn peek(&mut self) -> std::io::Result<Option<u8>> {
        loop {
            match self.buf[self.pos..]
                .iter()
                .position(|b| !b.is_ascii_whitespace())
            {
                Some(i) => {
                    self.pos += i;
                    return Ok(Some(self.buf[self.pos]));
                }
                None => {
                    self.pos = self.buf.len();
                    if !self.more()? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Expects `byte` next (after whitespace) and reads it.
    pub(super) fn expect(&mut self, byte: u8) -> Step<()> {
        if self.peek()? == Some(byte) {
            self.pos += 1;
            Ok(Some(()))
        } else {
            Ok(None)
        }
    }

    /// The length of the JSON value starting at `pos` (its text ending at a structural
    /// byte), reading more input as needed; `None` when it does not end or nests too deep.
    pub(super) fn value_len(&mut self) -> Step<usize> {
        let mut scanned = 0usize;
        let mut depth = 0usize;
        let mut in_string = false;
        let Some(&first) = self.buf.get(self.pos) else {
            return Ok(None);
        };
        let scalar = !matches!(first, b'[' | b'{' | b'"');
        loop {
            let rest = &self.buf[self.pos + scanned..];
            let mut i = 0;
            while i < rest.len() {
                let b = rest[i];
                if scalar {
                    if matches!(b, b',' | b']' | b'}') || b.is_ascii_whitespace() {
                        return Ok(Some(scanned + i));
                    }
                    i += 1;
                    continue;
                }
                if in_string {
                    // Jump to the next quote or backslash.
                    match memchr::memchr2(b'"', b'\\', &rest[i..]) {
                        None => {
                            i = rest.len();
                            continue;
                        }
                        Some(o) => i += o,
                    }
                    if rest[i] == b'\\' {
                        if i + 1 >= rest.len() {
                            break; // the escaped byte is in the next chunk
                        }
                        i += 2;
                        continue;
                    }
                    in_string = false;
                    i += 1;
                    if depth == 0 {
                        return Ok(Some(scanned + i));
                    }
                    continue;
                }
                // Outside strings: jump to the next byte that matters.
                match memchr::memchr3(b'"', b'[', b']', &rest[i..]) {
                    Some(o) if !rest[i..i + o].iter().any(|c| matches!(c, b'{' | b'}')) => {
                        i += o;
                    }
                    _ => {
                        // Braces around: byte by byte.
                        while i < rest.len() && !matches!(rest[i], b'"' | b'[' | b']' | b'{' | b'}')
                        {
                            i += 1;
                        }
                        if i == rest.len() {
                            continue;
                        }
                    }
                }
                match rest[i] {
                    b'"' => in_string = true,
                    b'[' | b'{' => {
                        depth += 1;
                        if depth > MAX_DEPTH {
                            return Ok(None);
                        }
                    }
                    _ => {
                        let Some(d) = depth.checked_sub(1) else {
                            return Ok(None);
                        };
                        depth = d;
                        if depth == 0 {
                            return Ok(Some(scanned + i + 1));
                        }
                    }
                }
                i += 1;
            }
            scanned += i;
            if !self.more()? {
                // A scalar may end the input; anything else is cut off.
                return Ok((scalar && scanned > 0).then_some(scanned));
            }
        }
    }

    /// The next value, parsed as `T` on its own.
    pub(super) fn parse<T: DeserializeOwned>(&mut self) -> Step<T> {
        if self.peek()?.is_none() {
            return Ok(None);
        }
        let Some(len) = self.value_len()? else {
            return Ok(None);
        };
        let text = &self.buf[self.pos..self.pos + len];
        let parsed = serde_json::from_slice::<T>(text).ok();
        self.pos += len;
        Ok(parsed)
    }

    /// The elements of the array that comes next, each parsed as `T`; `Lenient(None)` for a
    /// value that is not an array, as the in-memory visitor does.
    pub(super) fn lenient<T: DeserializeOwned>(&mut self) -> Step<Lenient<T>> {
        if self.peek()? != Some(b'[') {
            return self.parse::<Lenient<T>>();
        }
        self.pos += 1;
        Ok(self
            .elements(|w| w.parse::<T>())?
            .map(|items| Lenient(Some(items))))
    }

    /// The elements of the array whose `[` was just read, each read by `item`, through its
    /// `]`; `None` when an element or what follows it is not what an array holds. The first
    /// non-empty array's length is kept as the room to reserve for the next.
    pub(super) fn elements<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Step<T>,
    ) -> Step<Vec<T>> {
        let mut items = Vec::with_capacity(self.hint);
        if self.peek()? == Some(b']') {
            self.pos += 1;
            return Ok(Some(items));
        }
        loop {
            let Some(x) = item(self)? else {
                return Ok(None);
            };
            items.push(x);
            match self.peek()? {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    if self.hint == 0 {
                        self.hint = items.len();
                    }
                    return Ok(Some(items));
                }
                _ => return Ok(None),
            }
        }
    }

    /// The number that comes next (after whitespace), read, when [`json_number::scan`] takes
    /// it; `None`, nothing read, for anything else (left to serde_json).
    #[inline]
    pub(super) fn number(&mut self) -> std::io::Result<Option<f64>> {
        if self.peek()?.is_none() {
            return Ok(None);
        }
        loop {
            match json_number::scan(&self.buf[self.pos..]) {
                Scan::Number(v, n) => {
                    self.pos += n;
                    return Ok(Some(v));
                }
                Scan::Other => return Ok(None),
                Scan::Incomplete => {
                    if !self.more()? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// A per-request array of numbers (`ttfts`, `input_lens`, ...) that comes next, as
    /// [`Window::lenient`] of [`OptF64`] gives it: each number read by
    /// [`json_number::scan`] as the array is read, any other element by serde_json.
    pub(super) fn numbers(&mut self) -> Step<Option<Vec<f64>>> {
        if self.peek()? != Some(b'[') {
            return Ok(self.parse::<Lenient<OptF64>>()?.map(numbers));
        }
        self.pos += 1;
        Ok(self
            .elements(|w| match w.number()? {
                Some(v) => Ok(Some(v)),
                None => Ok(w.parse::<OptF64>()?.map(|x| x.0.unwrap_or(f64::NAN))),
            })?
            .map(Some))
    }

    /// One request's gaps (the array that comes next, after whitespace) into `out`, read in
    /// one pass, when every element is a number [`json_number::scan`] takes: true, the array
    /// read. Otherwise false and nothing read (`out` cleared), for serde_json to read it.
    pub(super) fn plain_gaps(&mut self, out: &mut Vec<f64>) -> std::io::Result<bool> {
        out.clear();
        if self.peek()? != Some(b'[') {
            return Ok(false);
        }
        // Offsets from `pos`, which stays at the `[` until the array is read whole (`more`
        // keeps the bytes from `pos` on).
        let mut at = 1;
        let mut value_next = true;
        loop {
            let b = &self.buf[self.pos..];
            while b.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            }
            let Some(&c) = b.get(at) else {
                if self.more()? {
                    continue;
                }
                out.clear();
                return Ok(false);
            };
            if value_next {
                match json_number::scan(&b[at..]) {
                    Scan::Number(v, n) => {
                        out.push(v);
                        at += n;
                        // The common case, a comma right after the number, without a turn
                        // of the loop.
                        if b.get(at) == Some(&b',') {
                            at += 1;
                        } else {
                            value_next = false;
                        }
                        continue;
                    }
                    Scan::Incomplete => {
                        if self.more()? {
                            continue;
                        }
                    }
                    Scan::Other if c == b']' && out.is_empty() => {
                        self.pos += at + 1;
                        return Ok(true);
                    }
                    Scan::Other => {}
                }
            } else if c == b',' {
                at += 1;
                value_next = true;
                continue;
            } else if c == b']' {
                self.pos += at + 1;
                return Ok(true);
            }
            out.clear();
            return Ok(false);
        }
    }

    /// The array that comes next (its `[` the next byte), as the `Value` parsing it whole
    /// gives, its elements parsed one at a time into a vector of [`Window::hint`]'s size.
    pub(super) fn value_array(&mut self) -> Step<Value> {
        let Some(Lenient(Some(items))) = self.lenient::<Value>()? else {
            return Ok(None);
        };
        Ok(Some(Value::Array(items)))
    }

    /// An `itls` array (next, its `[` not yet read), each request's gaps read as
    /// [`super::requests::GapValues`] reads them. With [`Window::gaps`], they are pushed there and
    /// each request gets a stand-in: one NaN when it has gaps, none else; without, each gets
    /// its gaps.
    pub(super) fn gap_lists(&mut self) -> Step<Vec<Vec<f64>>> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let got = self.gap_lists_with(&mut scratch);
        scratch.clear();
        self.scratch = scratch;
        got
    }

    /// [`Window::gap_lists`], `scratch` holding each request's gaps as they are read.
    pub(super) fn gap_lists_with(&mut self, scratch: &mut Vec<f64>) -> Step<Vec<Vec<f64>>> {
        if self.expect(b'[')?.is_none() {
            return Ok(None);
        }
        let mut lists = Vec::with_capacity(self.hint);
        if self.peek()? == Some(b']') {
            self.pos += 1;
            return Ok(Some(lists));
        }
        loop {
            // Read into a reused buffer (by hand when plain, else by serde_json) and copied
            // once, to where it goes.
            let list = if self.plain_gaps(scratch)? {
                None
            } else {
                let Some(list) = self.parse::<ScratchGaps>()? else {
                    return Ok(None);
                };
                Some(list)
            };
            let gaps = list.as_ref().map_or(scratch.as_slice(), |l| l.0.as_slice());
            lists.push(match self.gaps.as_deref_mut() {
                Some(g) => {
                    g.push(gaps);
                    if gaps.is_empty() {
                        Vec::new()
                    } else {
                        vec![f64::NAN]
                    }
                }
                None => gaps.to_vec(),
            });
            if let Some(list) = list {
                list.recycle();
            }
            match self.peek()? {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    if self.gaps.is_none() && self.hint == 0 {
                        self.hint = lists.len();
                    }
                    return Ok(Some(lists));
                }
                _ => return Ok(None),
            }
        }
    }

    /// The members of the document's object (its `{` already read), per-request arrays
    /// lifted as [`Doc`]'s visitor lifts them.
    pub(super) fn object(&mut self) -> Step<Doc> {
        let mut obj = Map::new();
        let mut arrays = RequestArrays::default();
        if self.peek()? == Some(b'}') {
            self.pos += 1;
            return Ok(Some(Doc {
                value: Value::Object(obj),
                arrays: None,
            }));
        }
        loop {
            if self.peek()? != Some(b'"') {
                return Ok(None);
            }
            let Some(key) = self.parse::<String>()? else {
                return Ok(None);
            };
            if self.expect(b':')?.is_none() {
                return Ok(None);
            }
            macro_rules! lift {
                ($t:ty) => {
                    match self.lenient::<$t>()? {
                        Some(l) => l,
                        None => return Ok(None),
                    }
                };
            }
            let lifted = match key.as_str() {
                "input_lens" | "output_lens" | "ttfts" | "start_times" => {
                    let Some(v) = self.numbers()? else {
                        return Ok(None);
                    };
                    let some = v.is_some();
                    match key.as_str() {
                        "input_lens" => arrays.input_lens = v,
                        "output_lens" => arrays.output_lens = v,
                        "ttfts" => arrays.ttfts = v,
                        _ => arrays.start_times = v,
                    }
                    some
                }
                "itls" => {
                    arrays.itls = if self.peek()? == Some(b'[') {
                        match self.gap_lists()? {
                            Some(lists) => Some(lists),
                            None => return Ok(None),
                        }
                    } else {
                        lift!(GapValues)
                            .0
                            .map(|v| v.into_iter().map(|g| g.0).collect())
                    };
                    arrays.itls.is_some()
                }
                "errors" => {
                    arrays.errors = lift!(OptText)
                        .0
                        .map(|v| v.into_iter().map(|e| e.0).collect());
                    arrays.errors.is_some()
                }
                "generated_texts" => {
                    lift!(IgnoredAny);
                    true
                }
                _ => {
                    // vLLM's `latencies`, one per request, parsed into a vector of that size.
                    let per_request = key == "latencies" && self.hint > 0;
                    let v = if per_request && self.peek()? == Some(b'[') {
                        self.value_array()?
                    } else {
                        self.parse::<Value>()?
                    };
                    let Some(v) = v else {
                        return Ok(None);
                    };
                    obj.insert(key, v);
                    match self.peek()? {
                        Some(b',') => {
                            self.pos += 1;
                            continue;
                        }
                        Some(b'}') => {
                            self.pos += 1;
                            break;
                        }
                        _ => return Ok(None),
                    }
                }
            };
            if !lifted {
                arrays.malformed.push(key.clone());
            }
            obj.insert(key, Value::Null);
            match self.peek()? {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Ok(None),
            }
        }
        let arrays = (!arrays.is_empty()).then(|| Box::new(arrays));
        Ok(Some(Doc {
            value: Value::Object(obj),
            arrays,
        }))
    }
}
