//! Reading a msgpack array's elements in place: each as a borrowed
//! [`Field`], with no value tree built and nothing copied.
//!
//! Every claimed or handed job's record is such an array (the meta,
//! `crate::meta`), and a hand-off message is another (`crate::park`).
//! Decoding them into an `rmpv::Value` tree first allocated a node per
//! field and a buffer per string, only for the decoder to copy the few it
//! keeps: about 10k instructions a job on the client (callgrind,
//! docs/performance.md round fifteen), for a 47-byte meta. The markers are
//! read with `rmp`, the crate `rmpv` is built on.

use rmp::decode::{read_marker, Bytes, RmpRead};
use rmp::Marker;

/// One element of an array, as the decoders read it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Field<'a> {
    /// `nil`, a boolean, or a nested array, map or extension: the decoders
    /// read each as the field's default.
    Other,
    /// A non-negative integer.
    Uint(u64),
    /// A negative integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string's or a binary's bytes, as stored (not checked for UTF-8).
    Bytes(&'a [u8]),
}

impl<'a> Field<'a> {
    /// The field as a non-negative whole number: a float is truncated, a
    /// negative number or anything else is 0.
    pub fn number(self) -> u64 {
        match self {
            Field::Uint(n) => n,
            Field::Float(f) => f as u64,
            _ => 0,
        }
    }

    /// The field as a signed whole number (0 for what is not a number, and
    /// for an integer past `i64::MAX`).
    pub fn signed(self) -> i64 {
        match self {
            Field::Uint(n) => i64::try_from(n).unwrap_or(0),
            Field::Int(n) => n,
            Field::Float(f) => f as i64,
            _ => 0,
        }
    }

    /// The field as text: a string (invalid UTF-8 replaced), an integer's
    /// digits, or "" for anything else.
    pub fn text(self) -> String {
        match self {
            Field::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            Field::Uint(n) => n.to_string(),
            Field::Int(n) => n.to_string(),
            _ => String::new(),
        }
    }

    /// The field's bytes, when it is a string or a binary.
    pub fn bytes(self) -> Option<&'a [u8]> {
        match self {
            Field::Bytes(b) => Some(b),
            _ => None,
        }
    }
}

/// The elements of the msgpack array at the start of `raw`, and the bytes
/// after it. `Err` names what is wrong: not an array, or cut short.
pub(crate) fn read_array(raw: &[u8]) -> Result<(Vec<Field<'_>>, &[u8]), String> {
    let mut rd = Bytes::new(raw);
    let len = match read_marker(&mut rd).map_err(|_| "empty".to_owned())? {
        Marker::FixArray(n) => n as u32,
        Marker::Array16 => u32::from(rd.read_data_u16().map_err(cut)?),
        Marker::Array32 => rd.read_data_u32().map_err(cut)?,
        other => return Err(format!("not an array (marker {other:?})")),
    };
    // Every element takes a byte at least: a length past the bytes left is
    // a corrupt record, refused before anything is allocated for it.
    if len as usize > rd.remaining_slice().len() {
        return Err(format!("an array of {len} elements in {} bytes", raw.len()));
    }
    let mut fields = Vec::with_capacity(len as usize);
    for _ in 0..len {
        fields.push(read_field(&mut rd, 0)?);
    }
    Ok((fields, rd.remaining_slice()))
}

/// How deep nested arrays and maps are skipped: the records hold none, and
/// a corrupt value nested deeper is refused rather than recursed into.
const MAX_DEPTH: u32 = 32;

/// The element at the reader, which moves past it, nested `depth` deep.
fn read_field<'a>(rd: &mut Bytes<'a>, depth: u32) -> Result<Field<'a>, String> {
    let marker = read_marker(rd).map_err(|_| "cut short".to_owned())?;
    Ok(match marker {
        Marker::FixPos(n) => Field::Uint(u64::from(n)),
        Marker::U8 => Field::Uint(u64::from(rd.read_data_u8().map_err(cut)?)),
        Marker::U16 => Field::Uint(u64::from(rd.read_data_u16().map_err(cut)?)),
        Marker::U32 => Field::Uint(u64::from(rd.read_data_u32().map_err(cut)?)),
        Marker::U64 => Field::Uint(rd.read_data_u64().map_err(cut)?),
        Marker::FixNeg(n) => signed(i64::from(n)),
        Marker::I8 => signed(i64::from(rd.read_data_i8().map_err(cut)?)),
        Marker::I16 => signed(i64::from(rd.read_data_i16().map_err(cut)?)),
        Marker::I32 => signed(i64::from(rd.read_data_i32().map_err(cut)?)),
        Marker::I64 => signed(rd.read_data_i64().map_err(cut)?),
        Marker::F32 => Field::Float(f64::from(rd.read_data_f32().map_err(cut)?)),
        Marker::F64 => Field::Float(rd.read_data_f64().map_err(cut)?),
        Marker::FixStr(n) => Field::Bytes(take(rd, u32::from(n))?),
        Marker::Str8 | Marker::Bin8 => {
            let n = u32::from(rd.read_data_u8().map_err(cut)?);
            Field::Bytes(take(rd, n)?)
        }
        Marker::Str16 | Marker::Bin16 => {
            let n = u32::from(rd.read_data_u16().map_err(cut)?);
            Field::Bytes(take(rd, n)?)
        }
        Marker::Str32 | Marker::Bin32 => {
            let n = rd.read_data_u32().map_err(cut)?;
            Field::Bytes(take(rd, n)?)
        }
        Marker::Null | Marker::True | Marker::False => Field::Other,
        Marker::FixArray(n) => skip(rd, u32::from(n), depth)?,
        Marker::Array16 => {
            let n = u32::from(rd.read_data_u16().map_err(cut)?);
            skip(rd, n, depth)?
        }
        Marker::Array32 => {
            let n = rd.read_data_u32().map_err(cut)?;
            skip(rd, n, depth)?
        }
        Marker::FixMap(n) => skip(rd, 2 * u32::from(n), depth)?,
        Marker::Map16 => {
            let n = u32::from(rd.read_data_u16().map_err(cut)?);
            skip(rd, 2 * n, depth)?
        }
        Marker::Map32 => {
            let n = rd.read_data_u32().map_err(cut)?;
            skip(rd, n.checked_mul(2).ok_or("a map too long")?, depth)?
        }
        Marker::FixExt1 => ext(rd, 1)?,
        Marker::FixExt2 => ext(rd, 2)?,
        Marker::FixExt4 => ext(rd, 4)?,
        Marker::FixExt8 => ext(rd, 8)?,
        Marker::FixExt16 => ext(rd, 16)?,
        Marker::Ext8 => {
            let n = u32::from(rd.read_data_u8().map_err(cut)?);
            ext(rd, n)?
        }
        Marker::Ext16 => {
            let n = u32::from(rd.read_data_u16().map_err(cut)?);
            ext(rd, n)?
        }
        Marker::Ext32 => {
            let n = rd.read_data_u32().map_err(cut)?;
            ext(rd, n)?
        }
        Marker::Reserved => return Err("a reserved marker (0xc1)".to_owned()),
    })
}

/// A negative integer, or a non-negative one stored in a signed type.
fn signed(n: i64) -> Field<'static> {
    u64::try_from(n).map_or(Field::Int(n), Field::Uint)
}

/// The next `n` bytes, borrowed.
fn take<'a>(rd: &mut Bytes<'a>, n: u32) -> Result<&'a [u8], String> {
    let rest = rd.remaining_slice();
    let (taken, after) = rest
        .split_at_checked(n as usize)
        .ok_or_else(|| format!("a string of {n} bytes with {} left", rest.len()))?;
    *rd = Bytes::new(after);
    Ok(taken)
}

/// Past `n` nested elements (an array's, or a map's keys and values).
fn skip<'a>(rd: &mut Bytes<'a>, n: u32, depth: u32) -> Result<Field<'a>, String> {
    if depth >= MAX_DEPTH {
        return Err(format!("values nested over {MAX_DEPTH} deep"));
    }
    for _ in 0..n {
        read_field(rd, depth + 1)?;
    }
    Ok(Field::Other)
}

/// Past an extension's type byte and its `n` bytes of data.
fn ext<'a>(rd: &mut Bytes<'a>, n: u32) -> Result<Field<'a>, String> {
    rd.read_data_i8().map_err(cut)?;
    take(rd, n)?;
    Ok(Field::Other)
}

fn cut<E>(_: E) -> String {
    "cut short".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmpv::Value;

    fn packed(values: Vec<Value>, after: &[u8]) -> Vec<u8> {
        let mut raw = Vec::new();
        rmpv::encode::write_value(&mut raw, &Value::Array(values)).unwrap();
        raw.extend_from_slice(after);
        raw
    }

    #[test]
    fn each_kind_of_element_reads_as_rmpv_encodes_it_and_the_rest_is_left() {
        let long = "x".repeat(70_000);
        let raw = packed(
            vec![
                Value::from(0u64),
                Value::from(127u64),
                Value::from(255u64),
                Value::from(65_535u64),
                Value::from(4_294_967_296u64),
                Value::from(u64::MAX),
                Value::from(-1i64),
                Value::from(-33i64),
                Value::from(i64::MIN),
                Value::from(1.5f64),
                Value::F32(2.5),
                Value::from("queue"),
                Value::from("é".repeat(100)),
                Value::from(long.as_str()),
                Value::Binary(vec![0xff, 0x00]),
                Value::Nil,
                Value::from(true),
                Value::Array(vec![Value::from(1u64), Value::from("nested")]),
                Value::Map(vec![(Value::from("k"), Value::from(2u64))]),
                Value::Ext(5, vec![1, 2, 3]),
                Value::from(42u64),
            ],
            b"{\"i\":1}",
        );
        let (fields, rest) = read_array(&raw).unwrap();
        assert_eq!(rest, b"{\"i\":1}");
        let expected = [
            Field::Uint(0),
            Field::Uint(127),
            Field::Uint(255),
            Field::Uint(65_535),
            Field::Uint(4_294_967_296),
            Field::Uint(u64::MAX),
            Field::Int(-1),
            Field::Int(-33),
            Field::Int(i64::MIN),
            Field::Float(1.5),
            Field::Float(2.5),
            Field::Bytes(b"queue"),
        ];
        assert_eq!(fields[..expected.len()], expected);
        assert_eq!(fields[12].text(), "é".repeat(100));
        assert_eq!(fields[13].bytes().map(<[u8]>::len), Some(70_000));
        assert_eq!(fields[14], Field::Bytes(&[0xff, 0x00]));
        assert_eq!(fields[15..20], [Field::Other; 5]);
        // Nested values were skipped whole: the element after them is read.
        assert_eq!(fields[20], Field::Uint(42));
    }

    #[test]
    fn numbers_and_text_convert_as_the_record_decoders_read_them() {
        assert_eq!(Field::Uint(7).number(), 7);
        assert_eq!(Field::Float(9.9).number(), 9);
        assert_eq!(Field::Int(-5).number(), 0);
        assert_eq!(Field::Bytes(b"12").number(), 0);
        assert_eq!(Field::Int(-5).signed(), -5);
        assert_eq!(Field::Uint(u64::MAX).signed(), 0);
        assert_eq!(Field::Uint(12).text(), "12");
        assert_eq!(Field::Int(-3).text(), "-3");
        assert_eq!(Field::Other.text(), "");
        assert_eq!(Field::Bytes(&[0x66, 0xff]).text(), "f\u{fffd}");
    }

    #[test]
    fn what_is_not_a_whole_array_is_refused_with_what_is_wrong() {
        assert!(read_array(b"").unwrap_err().contains("empty"));
        let map = {
            let mut raw = Vec::new();
            rmpv::encode::write_value(&mut raw, &Value::Map(vec![])).unwrap();
            raw
        };
        assert!(read_array(&map).unwrap_err().contains("not an array"));
        let whole = packed(vec![Value::from("a string"), Value::from(300u64)], b"");
        for end in 1..whole.len() {
            assert!(
                read_array(&whole[..end]).is_err(),
                "cut at {end} of {}",
                whole.len()
            );
        }
        // A length that the bytes left cannot hold allocates nothing.
        assert!(read_array(&[0xdd, 0xff, 0xff, 0xff, 0xff])
            .unwrap_err()
            .contains("elements in 5 bytes"));
        assert!(read_array(&[0x91, 0xc1]).unwrap_err().contains("reserved"));
        // A corrupt value nested past any record's depth is refused, not
        // recursed into until the stack runs out.
        let mut deep = vec![0x91; 100_000];
        deep.push(0x01);
        assert!(read_array(&deep).unwrap_err().contains("nested over"));
    }
}
