//! Byte counts as scenarios write them: `4 KiB`, `1 MiB`, or a range `4 KiB..128 KiB`.

use std::fmt;

use serde::{Deserialize, Deserializer};

/// A byte count written with a unit: `4 KiB`, `1 MiB`, `512MiB`, `2 GiB`, or a bare number of bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Size(pub u64);

impl Size {
    pub fn parse(text: &str) -> std::result::Result<Size, String> {
        let t = text.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (number, unit) = t.split_at(split);
        let number: u64 = number
            .parse()
            .map_err(|_| format!("`{text}` is not a size: write a number and a unit, like `4 KiB` or `1 MiB`"))?;
        let mult = match unit.trim() {
            "" | "B" => 1,
            "KiB" | "K" | "k" => 1 << 10,
            "MiB" | "M" | "m" => 1 << 20,
            "GiB" | "G" | "g" => 1 << 30,
            other => {
                return Err(format!(
                    "`{text}`: unknown unit `{other}`; use B, KiB, MiB or GiB (binary units; `KB`/`MB` are ambiguous)"
                ))
            }
        };
        number.checked_mul(mult).map(Size).ok_or_else(|| format!("`{text}` is too large"))
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b >= 1 << 30 && b.is_multiple_of(1 << 30) {
            write!(f, "{} GiB", b >> 30)
        } else if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
            write!(f, "{} MiB", b >> 20)
        } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
            write!(f, "{} KiB", b >> 10)
        } else {
            write!(f, "{b} B")
        }
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Size, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) => Ok(Size(n)),
            Raw::Text(t) => Size::parse(&t).map_err(serde::de::Error::custom),
        }
    }
}

/// A size or a range of sizes: `64 KiB` or `4 KiB..128 KiB`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SizeOrRange(pub u64, pub u64);

impl<'de> Deserialize<'de> for SizeOrRange {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<SizeOrRange, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(u64),
            Text(String),
        }
        let text = match Raw::deserialize(d)? {
            Raw::Int(n) => return Ok(SizeOrRange(n, n)),
            Raw::Text(t) => t,
        };
        match text.split_once("..") {
            Some((a, b)) => {
                let a = Size::parse(a).map_err(serde::de::Error::custom)?;
                let b = Size::parse(b).map_err(serde::de::Error::custom)?;
                Ok(SizeOrRange(a.0, b.0))
            }
            None => Size::parse(&text).map(|s| SizeOrRange(s.0, s.0)).map_err(serde::de::Error::custom),
        }
    }
}
