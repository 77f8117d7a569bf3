//! One request's inter-token gaps, held exactly in as few bytes as their values allow.
//!
//! A benchmark file writes each gap as decimal text, and most tools write few digits
//! (`0.023`, `0.0117`): such a value is a small integer over a power of ten. When every gap of
//! a list is one, the list keeps the integers (2 or 4 bytes each) and the power, and reads each
//! value back as `n / 10^d × 10^m`: the same two IEEE operations, on exactly representable
//! operands, that give the value bit for bit (`m` = 3 for a file's seconds read as
//! milliseconds: the parse of the text, then × 1000, as the readers compute it). Every value
//! is checked as it is encoded, so a list that does not round-trip bit for bit stays `f64`.
//! A run of 20 million three-digit gaps takes 40 MB instead of 160; gaps measured to the
//! nanosecond (`0.012849116325378418`) stay 8 bytes each, which is less than their text.
//!
//! The idea is that of ALP (Afroozeh, Kuffo and Boncz, "ALP: Adaptive Lossless floating-Point
//! Compression", SIGMOD 2024), kept to one exponent a list and no exceptions.

/// 10^0 ..= 10^22: every one exactly an `f64`, so dividing by it is correctly rounded.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The most decimal digits after the point a list is encoded with (nanoseconds in seconds).
const MAX_DIGITS: u8 = 9;

/// Gaps between consecutive output chunks of one request (see the module doc).
#[derive(Clone, Default)]
pub struct Gaps(Repr);

#[derive(Clone)]
enum Repr {
    /// The values as they are.
    Raw(Box<[f64]>),
    /// Value `i` is `ints[i] / 10^div × 10^mul`.
    Small { div: u8, mul: u8, ints: Box<[u16]> },
    /// As `Small`, with wider integers.
    Wide { div: u8, mul: u8, ints: Box<[i32]> },
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Raw(Box::default())
    }
}

/// How a list is encoded, for the wire: the kind, the two exponents, the integers or values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GapsParts<'a> {
    /// `f64` values.
    Raw(&'a [f64]),
    /// `n / 10^div × 10^mul` with `n` in 0..=65,535.
    Small {
        /// The power of ten the integers are divided by.
        div: u8,
        /// The power of ten the quotients are multiplied by.
        mul: u8,
        /// The integers.
        ints: &'a [u16],
    },
    /// `n / 10^div × 10^mul` with `n` an `i32`.
    Wide {
        /// The power of ten the integers are divided by.
        div: u8,
        /// The power of ten the quotients are multiplied by.
        mul: u8,
        /// The integers.
        ints: &'a [i32],
    },
}

/// Why parts do not make a list: an exponent past 10^22 (the wire's damage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadExponent;

#[inline]
fn decode(n: f64, div: u8, mul: u8) -> f64 {
    let v = n / POW10[usize::from(div)];
    if mul == 0 {
        v
    } else {
        v * POW10[usize::from(mul)]
    }
}

/// The integer that is `x` with `div` digits after the point, if `x` is exactly that.
#[inline]
fn integer_of(x: f64, div: u8) -> Option<f64> {
    let n = (x * POW10[usize::from(div)]).round_ties_even();
    // -0.0 has no integer: it stays as it is.
    (n.abs() <= f64::from(i32::MAX)
        && (n / POW10[usize::from(div)]).to_bits() == x.to_bits()
        && n.to_bits() != (-0.0f64).to_bits())
    .then_some(n)
}

impl Gaps {
    /// The gaps `values` (ms), held exactly: as small integers where every value is one over
    /// a power of ten, as they are otherwise.
    pub fn exact(values: &[f64]) -> Gaps {
        Gaps::as_integers(values).unwrap_or_else(|| Gaps(Repr::Raw(values.into())))
    }

    /// The gaps `values` (ms) as small integers, if every value is one over a power of ten
    /// (see [`Gaps::exact`]); `None` otherwise, having copied nothing.
    pub fn as_integers(values: &[f64]) -> Option<Gaps> {
        Gaps::encoded(values, 0)
    }

    /// The gaps `seconds × 1000` (ms): a file's seconds as the readers convert them, held as
    /// the seconds' integers where the seconds are short decimals.
    pub fn ms_of_seconds(seconds: &[f64]) -> Gaps {
        Gaps::encoded(seconds, 3)
            .unwrap_or_else(|| Gaps(Repr::Raw(seconds.iter().map(|s| s * 1000.0).collect())))
    }

    /// `values` as integers over 10^div, read back × 10^mul; `None` if some value is not
    /// exactly such an integer within [`MAX_DIGITS`].
    fn encoded(values: &[f64], mul: u8) -> Option<Gaps> {
        if values.is_empty() {
            return None;
        }
        // The fewest digits every value needs: a value exact with `d` digits is exact with
        // more (the same rational, rounded once), so the digits only grow.
        let mut div = 0u8;
        for &x in values {
            while integer_of(x, div).is_none() {
                div += 1;
                if div > MAX_DIGITS {
                    return None;
                }
            }
        }
        // Encoded and checked again with the list's digits, each value bit for bit.
        let mut small = true;
        let mut ints = Vec::with_capacity(values.len());
        for &x in values {
            let n = integer_of(x, div)?;
            small &= (0.0..=f64::from(u16::MAX)).contains(&n);
            ints.push(n as i32);
        }
        Some(Gaps(if small {
            Repr::Small {
                div,
                mul,
                ints: ints.iter().map(|&n| n as u16).collect(),
            }
        } else {
            Repr::Wide {
                div,
                mul,
                ints: ints.into(),
            }
        }))
    }

    /// A list from its wire parts.
    pub fn from_parts(parts: GapsParts<'_>) -> Result<Gaps, BadExponent> {
        let ok = |e: u8| usize::from(e) < POW10.len();
        Ok(Gaps(match parts {
            GapsParts::Raw(v) => Repr::Raw(v.into()),
            GapsParts::Small { div, mul, ints } if ok(div) && ok(mul) => Repr::Small {
                div,
                mul,
                ints: ints.into(),
            },
            GapsParts::Wide { div, mul, ints } if ok(div) && ok(mul) => Repr::Wide {
                div,
                mul,
                ints: ints.into(),
            },
            _ => return Err(BadExponent),
        }))
    }

    /// The list's wire parts.
    pub fn parts(&self) -> GapsParts<'_> {
        match &self.0 {
            Repr::Raw(v) => GapsParts::Raw(v),
            Repr::Small { div, mul, ints } => GapsParts::Small {
                div: *div,
                mul: *mul,
                ints,
            },
            Repr::Wide { div, mul, ints } => GapsParts::Wide {
                div: *div,
                mul: *mul,
                ints,
            },
        }
    }

    /// Gaps.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Raw(v) => v.len(),
            Repr::Small { ints, .. } => ints.len(),
            Repr::Wide { ints, .. } => ints.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Gap `i` (ms).
    pub fn get(&self, i: usize) -> Option<f64> {
        match &self.0 {
            Repr::Raw(v) => v.get(i).copied(),
            Repr::Small { div, mul, ints } => {
                ints.get(i).map(|&n| decode(f64::from(n), *div, *mul))
            }
            Repr::Wide { div, mul, ints } => ints.get(i).map(|&n| decode(f64::from(n), *div, *mul)),
        }
    }

    /// The gaps in order (ms).
    pub fn iter(&self) -> GapsIter<'_> {
        GapsIter {
            gaps: self,
            at: 0,
            end: self.len(),
        }
    }

    /// The gaps as a vector (ms).
    pub fn to_vec(&self) -> Vec<f64> {
        self.iter().collect()
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        match &self.0 {
            Repr::Raw(v) => std::mem::size_of_val(&**v),
            Repr::Small { ints, .. } => std::mem::size_of_val(&**ints),
            Repr::Wide { ints, .. } => std::mem::size_of_val(&**ints),
        }
    }
}

/// The values of a [`Gaps`], in order.
#[derive(Clone)]
pub struct GapsIter<'a> {
    gaps: &'a Gaps,
    at: usize,
    end: usize,
}

impl Iterator for GapsIter<'_> {
    type Item = f64;

    fn next(&mut self) -> Option<f64> {
        if self.at >= self.end {
            return None;
        }
        self.at += 1;
        self.gaps.get(self.at - 1)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.at;
        (n, Some(n))
    }
}

impl ExactSizeIterator for GapsIter<'_> {}

impl<'a> IntoIterator for &'a Gaps {
    type Item = f64;
    type IntoIter = GapsIter<'a>;

    fn into_iter(self) -> GapsIter<'a> {
        self.iter()
    }
}

impl From<Vec<f64>> for Gaps {
    /// The values as they are (no encoding tried: see [`Gaps::exact`]).
    fn from(values: Vec<f64>) -> Gaps {
        Gaps(Repr::Raw(values.into_boxed_slice()))
    }
}

impl From<&[f64]> for Gaps {
    fn from(values: &[f64]) -> Gaps {
        Gaps(Repr::Raw(values.into()))
    }
}

impl FromIterator<f64> for Gaps {
    fn from_iter<I: IntoIterator<Item = f64>>(iter: I) -> Gaps {
        Gaps::from(iter.into_iter().collect::<Vec<f64>>())
    }
}

impl PartialEq for Gaps {
    /// The same values in order (as `f64` compare: NaN is unequal), however held.
    fn eq(&self, other: &Gaps) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl PartialEq<Vec<f64>> for Gaps {
    fn eq(&self, other: &Vec<f64>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl std::fmt::Debug for Gaps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(g: &Gaps) -> Vec<u64> {
        g.iter().map(f64::to_bits).collect()
    }

    #[test]
    fn short_decimals_are_held_small_and_read_back_bit_for_bit() {
        // Seconds with one to nine digits, read as ms the way the readers do (× 1000).
        let texts = [
            "0.023",
            "0.0117",
            "0.5",
            "0.035",
            "1.1",
            "0.000000001",
            "0.1",
            "0.3",
            "1.675",
            "0.0",
            "0.12345",
            "0.007",
        ];
        for digits_at_most in 1..texts.len() {
            let seconds: Vec<f64> = texts[..digits_at_most]
                .iter()
                .map(|t| t.parse().unwrap())
                .collect();
            let want: Vec<u64> = seconds.iter().map(|s| (s * 1000.0).to_bits()).collect();
            let g = Gaps::ms_of_seconds(&seconds);
            assert!(
                !matches!(g.0, Repr::Raw(_)),
                "{:?}",
                &texts[..digits_at_most]
            );
            assert_eq!(bits(&g), want, "{:?}", &texts[..digits_at_most]);
            assert_eq!(g.len(), seconds.len());
        }
        // Every 5-digit value of seconds, in ms: exact through the seconds' integers (many
        // products, 0.00007 × 1000 say, are not short decimals themselves).
        let seconds: Vec<f64> = (0..100_000).map(|k| k as f64 / 100_000.0).collect();
        let g = Gaps::ms_of_seconds(&seconds);
        // Integers up to 99,999: four bytes each.
        assert!(matches!(g.0, Repr::Wide { div: 5, mul: 3, .. }));
        let want: Vec<u64> = seconds.iter().map(|s| (s * 1000.0).to_bits()).collect();
        assert_eq!(bits(&g), want);
        // ms as they are: three-digit ms values in 2 bytes each, exact.
        let ms: Vec<f64> = ["7.125", "12.5", "0.001", "65.535"]
            .iter()
            .map(|t| t.parse().unwrap())
            .collect();
        let g = Gaps::exact(&ms);
        assert!(matches!(g.0, Repr::Small { div: 3, mul: 0, .. }));
        assert_eq!(bits(&g), ms.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        assert_eq!(g.heap_bytes(), 8);
    }

    #[test]
    fn values_that_are_not_short_decimals_stay_as_they_are() {
        let cases: [&[f64]; 7] = [
            &[0.000000001, 2.675], // nine digits: 2,675,000,000 is past i32
            &[0.012849116325378418, 0.5],
            &[f64::NAN],
            &[1.0, f64::INFINITY],
            &[1e300],
            &[3.0e10], // an integer past i32
            &[1.0 / 3.0],
        ];
        for values in cases {
            let g = Gaps::exact(values);
            assert!(matches!(g.0, Repr::Raw(_)), "{values:?}");
            let want: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
            assert_eq!(bits(&g), want);
            let s = Gaps::ms_of_seconds(values);
            let want: Vec<u64> = values.iter().map(|v| (v * 1000.0).to_bits()).collect();
            assert_eq!(bits(&s), want);
        }
    }

    #[test]
    fn signs_and_widths_are_kept() {
        // A negative gap (a clock step) or a large one needs the signed integers; -0.0 has
        // none and stays as it is, sign and all.
        for values in [&[-0.5, 2.0][..], &[-0.0, 1.0], &[70_000.0, 1.0]] {
            let g = Gaps::exact(values);
            match values[0] == 0.0 {
                true => assert!(matches!(g.0, Repr::Raw(_))),
                false => assert!(matches!(g.0, Repr::Wide { .. }), "{values:?}"),
            }
            assert_eq!(
                bits(&g),
                values.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }
        let g = Gaps::exact(&[250.0, 0.5]);
        assert!(matches!(g.0, Repr::Small { div: 1, .. }));
        assert_eq!(g.heap_bytes(), 4);
    }

    #[test]
    fn parts_round_trip_and_bad_exponents_are_refused() {
        for g in [
            Gaps::exact(&[1.5, 2.25]),
            Gaps::exact(&[-1.5, 2.25]),
            Gaps::exact(&[0.1 + 0.2]),
            Gaps::default(),
        ] {
            assert_eq!(Gaps::from_parts(g.parts()).unwrap(), g);
        }
        let ints = [1u16];
        assert_eq!(
            Gaps::from_parts(GapsParts::Small {
                div: 23,
                mul: 0,
                ints: &ints
            }),
            Err(BadExponent)
        );
        assert!(Gaps::from_parts(GapsParts::Wide {
            div: 0,
            mul: 200,
            ints: &[1]
        })
        .is_err());
    }

    #[test]
    fn reads_like_a_vector() {
        let g = Gaps::exact(&[1.5, 2.25, 3.0]);
        assert_eq!(g, vec![1.5, 2.25, 3.0]);
        assert_eq!(g, Gaps::from(vec![1.5, 2.25, 3.0]));
        assert_ne!(g, Gaps::from(vec![1.5, 2.25]));
        assert_eq!(g.get(1), Some(2.25));
        assert_eq!(g.get(3), None);
        assert_eq!(g.iter().len(), 3);
        assert_eq!(g.iter().sum::<f64>(), 6.75);
        assert_eq!(format!("{g:?}"), "[1.5, 2.25, 3.0]");
        assert!(Gaps::default().is_empty());
        assert_eq!((&g).into_iter().collect::<Gaps>(), g);
    }
}
