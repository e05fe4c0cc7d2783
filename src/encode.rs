//! Compact JSON, byte for byte what `serde_json::to_writer` writes, for the one encoding of every
//! event: its string escaper skips over runs of plain text eight bytes at a time, where
//! serde_json looks up every byte. Shapes it does not write itself (map keys that are not
//! strings, byte strings, 128-bit integers) are handed to serde_json whole.
//!
//! One difference, on purpose: DEL and the C1 controls (U+0080 to U+009F), which serde_json
//! leaves as they are, are written `\u007f`, `\u0080`…, so that JSON shown on a terminal cannot
//! act on it. [`escape_c1`] does the same to what serde_json wrote.

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;
use serde::ser::{self, Impossible};

use crate::event::{Event, EventKind, ToolEnd, ToolKind, ToolStart, ToolStatus, Turn};

/// Appends `value` as compact JSON.
pub(crate) fn write<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> serde_json::Result<()> {
    let start = out.len();
    if value.serialize(&mut Encoder { out: &mut *out }).is_ok() {
        return Ok(());
    }
    out.truncate(start);
    serde_json::to_writer(&mut *out, value)?;
    if let Cow::Owned(safe) = escape_c1(&out[start..]) {
        out.truncate(start);
        out.extend_from_slice(&safe);
    }
    Ok(())
}

/// JSON with DEL and the C1 controls written as `\u` escapes; borrowed when it has none. Both
/// can only be inside strings, where an escape means the same character, so the JSON reads back
/// the same.
pub(crate) fn escape_c1(json: &[u8]) -> Cow<'_, [u8]> {
    let is_c1 =
        |at: usize| json[at] == 0xc2 && json.get(at + 1).is_some_and(|b| (0x80..0xa0).contains(b));
    let mut found =
        memchr::memchr2_iter(0x7f, 0xc2, json).filter(|&at| json[at] == 0x7f || is_c1(at));
    let Some(first) = found.next() else {
        return Cow::Borrowed(json);
    };
    let mut out = Vec::with_capacity(json.len() + 16);
    let mut plain = 0;
    for at in std::iter::once(first).chain(found) {
        out.extend_from_slice(&json[plain..at]);
        let code = if json[at] == 0x7f { 0x7f } else { json[at + 1] };
        push_unicode_escape(&mut out, code);
        plain = at + if json[at] == 0x7f { 1 } else { 2 };
    }
    out.extend_from_slice(&json[plain..]);
    Cow::Owned(out)
}

/// `\u00xx`, lower-case hex, as serde_json writes it.
fn push_unicode_escape(out: &mut Vec<u8>, code: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\u00");
    out.push(HEX[usize::from(code >> 4)]);
    out.push(HEX[usize::from(code & 0xf)]);
}

/// Appends an event as compact JSON, byte for byte what [`write`] writes for it: the envelope
/// (`seq`, `ts`, `turn`) written directly, then the kind's fields, without the map that serde's
/// `flatten` builds around them for every event.
pub(crate) fn event(out: &mut Vec<u8>, ev: &Event) -> serde_json::Result<()> {
    let start = out.len();
    let mut encoder = Encoder { out: &mut *out };
    if envelope(&mut encoder, ev).is_ok() {
        return Ok(());
    }
    out.truncate(start);
    write(out, ev)
}

fn envelope(e: &mut Encoder<'_>, ev: &Event) -> Result {
    e.out.extend_from_slice(b"{\"seq\":");
    e.integer(ev.seq);
    // The events of one read share their time and turn: those are written once and copied.
    STAMP.with_borrow_mut(|(stamp, bytes)| {
        if *stamp != Some((ev.ts, ev.turn)) {
            bytes.clear();
            bytes.extend_from_slice(b",\"ts\":");
            let mut e = Encoder { out: bytes };
            crate::event::rfc3339::serialize(&ev.ts, &mut e)?;
            e.out.extend_from_slice(b",\"turn\":");
            ev.turn.serialize(&mut e)?;
            *stamp = Some((ev.ts, ev.turn));
        }
        e.out.extend_from_slice(bytes);
        Ok(())
    })?;
    if common_kind(e.out, &ev.kind) {
        return Ok(());
    }
    // The kind is an object (its `type` first): its fields go on after the envelope's.
    let kind = e.out.len();
    ev.kind.serialize(&mut *e)?;
    match e.out.get(kind..kind + 2) {
        Some(b"{}") => {
            e.out.truncate(kind);
            e.out.push(b'}');
        }
        Some([b'{', _]) => e.out[kind] = b',',
        _ => return Err(Unsupported),
    }
    Ok(())
}

/// The kinds of nearly every event of a busy run (a tool call's start and end, the agent's text),
/// written field by field after the envelope, byte for byte as serde writes them: the same
/// fields in the same order, absent options left out. `false` for any other kind. The structs
/// are taken apart whole, so that a field added to one cannot be left out here unnoticed.
fn common_kind(out: &mut Vec<u8>, kind: &EventKind) -> bool {
    match kind {
        EventKind::ToolStarted(start) => {
            let ToolStart {
                call_id,
                name,
                kind,
                input,
                parent,
            } = start;
            out.extend_from_slice(b",\"type\":\"tool.started\"");
            tool_call(out, call_id, name, *kind, input, parent.as_deref());
        }
        EventKind::ToolCompleted(end) => {
            let ToolEnd {
                call_id,
                name,
                kind,
                input,
                parent,
                status,
                error,
                output_bytes,
                duration_ms,
                input_hash,
                result_hash,
            } = end;
            out.extend_from_slice(b",\"type\":\"tool.completed\"");
            tool_call(out, call_id, name, *kind, input, parent.as_deref());
            out.extend_from_slice(match status {
                ToolStatus::Ok => b",\"status\":\"ok\"",
                ToolStatus::Error => b",\"status\":\"error\"",
                ToolStatus::Denied => b",\"status\":\"denied\"",
            });
            if let Some(error) = error {
                out.extend_from_slice(b",\"error\":");
                string(out, error);
            }
            for (key, value) in [
                (&b",\"output_bytes\":"[..], output_bytes),
                (b",\"duration_ms\":", duration_ms),
            ] {
                if let Some(value) = value {
                    out.extend_from_slice(key);
                    itoa_like::Integer::write(*value, out);
                }
            }
            for (key, value) in [
                (&b",\"input_hash\":"[..], input_hash),
                (b",\"result_hash\":", result_hash),
            ] {
                if let Some(value) = value {
                    out.extend_from_slice(key);
                    string(out, value);
                }
            }
        }
        EventKind::Text { text } => {
            out.extend_from_slice(b",\"type\":\"text\",\"text\":");
            string(out, text);
        }
        _ => return false,
    }
    out.push(b'}');
    true
}

/// The fields a tool call's start and end share.
fn tool_call(
    out: &mut Vec<u8>,
    call_id: &str,
    name: &str,
    kind: ToolKind,
    input: &str,
    parent: Option<&str>,
) {
    out.extend_from_slice(b",\"call_id\":");
    string(out, call_id);
    out.extend_from_slice(b",\"name\":");
    string(out, name);
    out.extend_from_slice(match kind {
        ToolKind::Read => b",\"kind\":\"read\"",
        ToolKind::Edit => b",\"kind\":\"edit\"",
        ToolKind::Write => b",\"kind\":\"write\"",
        ToolKind::Shell => b",\"kind\":\"shell\"",
        ToolKind::Search => b",\"kind\":\"search\"",
        ToolKind::Fetch => b",\"kind\":\"fetch\"",
        ToolKind::Subagent => b",\"kind\":\"subagent\"",
        ToolKind::Todo => b",\"kind\":\"todo\"",
        ToolKind::Other => b",\"kind\":\"other\"",
    });
    out.extend_from_slice(b",\"input\":");
    string(out, input);
    if let Some(parent) = parent {
        out.extend_from_slice(b",\"parent\":");
        string(out, parent);
    }
}

/// An event's time and turn.
type Stamp = (std::time::SystemTime, Turn);

thread_local! {
    /// The last event's time and turn, and their JSON (`,"ts":…,"turn":…`).
    static STAMP: std::cell::RefCell<(Option<Stamp>, Vec<u8>)> =
        const { std::cell::RefCell::new((None, Vec::new())) };
}

struct Encoder<'a> {
    out: &'a mut Vec<u8>,
}

/// This encoder does not write the value; serde_json will (or a serializer error serde_json
/// reports too).
#[derive(Debug)]
struct Unsupported;

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("left to serde_json")
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        Unsupported
    }
}

type Result<T = ()> = std::result::Result<T, Unsupported>;

impl Encoder<'_> {
    fn integer(&mut self, n: impl itoa_like::Integer) {
        n.write(self.out);
    }

    fn float<T: Serialize>(&mut self, n: T) -> Result {
        // serde_json's own float formatting (and `null` for what JSON cannot hold).
        serde_json::to_writer(&mut *self.out, &n).map_err(|_| Unsupported)
    }

    /// `{"variant":`, before the value of a variant that carries one.
    fn open_variant(&mut self, variant: &str) {
        self.out.push(b'{');
        string(self.out, variant);
        self.out.push(b':');
    }
}

/// Writes `"s"` with JSON escapes exactly as serde_json writes them: `\"`, `\\`, the short forms
/// `\b \f \n \r \t`, and `\u00xx` (lower-case hex) for the other control characters; and
/// also, unlike serde_json, for DEL and the C1 controls.
fn string(out: &mut Vec<u8>, s: &str) {
    const ONES: u64 = u64::MAX / 255;
    const HIGHS: u64 = ONES << 7;
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut plain = 0;
    let mut at = 0;
    loop {
        // The next byte that may need an escape: below 0x20, `"`, `\`, DEL, or 0xC2 (which
        // begins the C1 controls).
        while let Some(word) = bytes.get(at..at + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            let quote = word ^ (ONES * u64::from(b'"'));
            let backslash = word ^ (ONES * u64::from(b'\\'));
            let del = word ^ (ONES * 0x7f);
            let c2 = word ^ (ONES * 0xc2);
            let flagged = (word.wrapping_sub(ONES * 0x20) & !word
                | quote.wrapping_sub(ONES) & !quote
                | backslash.wrapping_sub(ONES) & !backslash
                | del.wrapping_sub(ONES) & !del
                | c2.wrapping_sub(ONES) & !c2)
                & HIGHS;
            if flagged != 0 {
                at += flagged.trailing_zeros() as usize / 8;
                break;
            }
            at += 8;
        }
        while at < bytes.len() && !needs_escape(bytes[at]) {
            at += 1;
        }
        let Some(&byte) = bytes.get(at) else { break };
        if byte == 0xc2 {
            let Some(&next @ 0x80..0xa0) = bytes.get(at + 1) else {
                // Another character that begins with 0xC2: plain.
                at += 1;
                continue;
            };
            out.extend_from_slice(&bytes[plain..at]);
            push_unicode_escape(out, next);
            at += 2;
            plain = at;
            continue;
        }
        out.extend_from_slice(&bytes[plain..at]);
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\x08' => out.extend_from_slice(b"\\b"),
            b'\x0c' => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => push_unicode_escape(out, byte),
        }
        at += 1;
        plain = at;
    }
    out.extend_from_slice(&bytes[plain..]);
    out.push(b'"');
}

/// Whether `byte` needs an escape, or may (0xC2 begins the C1 controls, and other characters).
fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\' || byte == 0x7f || byte == 0xc2
}

/// Decimal integers without going through `fmt`.
mod itoa_like {
    pub(super) trait Integer: Copy {
        fn write(self, out: &mut Vec<u8>);
    }

    fn unsigned(mut n: u64, out: &mut Vec<u8>) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        out.extend_from_slice(&digits[at..]);
    }

    macro_rules! unsigned {
        ($($t:ty),*) => {$(
            impl Integer for $t {
                fn write(self, out: &mut Vec<u8>) {
                    unsigned(u64::from(self), out);
                }
            }
        )*};
    }

    macro_rules! signed {
        ($($t:ty),*) => {$(
            impl Integer for $t {
                fn write(self, out: &mut Vec<u8>) {
                    if self < 0 {
                        out.push(b'-');
                    }
                    unsigned(i64::from(self).unsigned_abs(), out);
                }
            }
        )*};
    }

    unsigned!(u8, u16, u32, u64);
    signed!(i8, i16, i32, i64);
}

/// The seven compound types of a `Serializer`, all one type.
macro_rules! compound_types {
    ($t:ty) => {
        type SerializeSeq = $t;
        type SerializeTuple = $t;
        type SerializeTupleStruct = $t;
        type SerializeTupleVariant = $t;
        type SerializeMap = $t;
        type SerializeStruct = $t;
        type SerializeStructVariant = $t;
    };
}

/// `Serializer` methods that write an integer in decimal.
macro_rules! integers {
    ($($method:ident($t:ty)),* $(,)?) => {$(
        fn $method(self, v: $t) -> Result {
            self.integer(v);
            Ok(())
        }
    )*};
}

impl<'s, 'a> ser::Serializer for &'s mut Encoder<'a> {
    type Ok = ();
    type Error = Unsupported;
    compound_types!(Compound<'s, 'a>);

    fn serialize_bool(self, v: bool) -> Result {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }

    integers!(
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
    );

    fn serialize_f32(self, v: f32) -> Result {
        self.float(v)
    }

    fn serialize_f64(self, v: f64) -> Result {
        self.float(v)
    }

    fn serialize_char(self, v: char) -> Result {
        string(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result {
        string(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result {
        Err(Unsupported)
    }

    fn serialize_none(self) -> Result {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result {
        string(self.out, variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result {
        self.open_variant(variant);
        value.serialize(&mut *self)?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'s, 'a>> {
        Ok(Compound::open(self, b'[', 0))
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'s, 'a>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'s, 'a>> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'s, 'a>> {
        self.open_variant(variant);
        Ok(Compound::open(self, b'[', 1))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'s, 'a>> {
        Ok(Compound::open(self, b'{', 0))
    }

    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<Compound<'s, 'a>> {
        Ok(Compound::open(self, b'{', 0))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'s, 'a>> {
        self.open_variant(variant);
        Ok(Compound::open(self, b'{', 1))
    }
}

/// An array or object being written.
struct Compound<'s, 'a> {
    encoder: &'s mut Encoder<'a>,
    first: bool,
    /// `]` or `}`.
    close: u8,
    /// Objects around it to close as well (a variant's `{"name": …}`).
    outer: u8,
}

impl<'s, 'a> Compound<'s, 'a> {
    fn open(encoder: &'s mut Encoder<'a>, open: u8, outer: u8) -> Self {
        encoder.out.push(open);
        Self {
            encoder,
            first: true,
            close: if open == b'[' { b']' } else { b'}' },
            outer,
        }
    }

    fn comma(&mut self) {
        if !std::mem::take(&mut self.first) {
            self.encoder.out.push(b',');
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        self.comma();
        value.serialize(&mut *self.encoder)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result {
        self.comma();
        let out = &mut *self.encoder.out;
        // A field's name is short and plain: copied at once, without the escaper's scan.
        if key.bytes().all(|b| !needs_escape(b)) {
            out.reserve(key.len() + 3);
            out.push(b'"');
            out.extend_from_slice(key.as_bytes());
            out.extend_from_slice(b"\":");
        } else {
            string(out, key);
            out.push(b':');
        }
        value.serialize(&mut *self.encoder)
    }

    fn close(self) -> Result {
        self.encoder.out.push(self.close);
        for _ in 0..self.outer {
            self.encoder.out.push(b'}');
        }
        Ok(())
    }
}

/// The `Serialize*` impls of [`Compound`] that differ only in their one method: it writes an
/// array element, or (given a `key`) an object field.
macro_rules! compound {
    ($($trait:ident::$method:ident($($key:ident)?) => $write:ident;)*) => {$(
        impl ser::$trait for Compound<'_, '_> {
            type Ok = ();
            type Error = Unsupported;

            fn $method<T: Serialize + ?Sized>(
                &mut self,
                $($key: &'static str,)?
                value: &T,
            ) -> Result {
                self.$write($($key,)? value)
            }

            fn end(self) -> Result {
                self.close()
            }
        }
    )*};
}

compound! {
    SerializeSeq::serialize_element() => element;
    SerializeTuple::serialize_element() => element;
    SerializeTupleStruct::serialize_field() => element;
    SerializeTupleVariant::serialize_field() => element;
    SerializeStruct::serialize_field(key) => field;
    SerializeStructVariant::serialize_field(key) => field;
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result {
        self.comma();
        key.serialize(KeyEncoder {
            out: &mut *self.encoder.out,
        })?;
        self.encoder.out.push(b':');
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result {
        value.serialize(&mut *self.encoder)
    }

    fn end(self) -> Result {
        self.close()
    }
}

/// A map key: only strings are written here.
struct KeyEncoder<'a> {
    out: &'a mut Vec<u8>,
}

/// `Serializer` methods that leave the value to serde_json: `name<T>(argument types) -> Ok type`.
macro_rules! unsupported {
    ($($method:ident $(<$t:ident>)? ($($arg:ty),*) $(-> $ok:ty)?;)*) => {$(
        fn $method $(<$t: Serialize + ?Sized>)? (self, $(_: $arg),*) -> Result $(<$ok>)? {
            Err(Unsupported)
        }
    )*};
}

impl ser::Serializer for KeyEncoder<'_> {
    type Ok = ();
    type Error = Unsupported;
    compound_types!(Impossible<(), Unsupported>);

    fn serialize_str(self, v: &str) -> Result {
        string(self.out, v);
        Ok(())
    }

    unsupported! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_char(char);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_some<T>(&T);
        serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
        serialize_newtype_struct<T>(&'static str, &T);
        serialize_newtype_variant<T>(&'static str, u32, &'static str, &T);
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
        serialize_struct_variant(&'static str, u32, &'static str, usize)
            -> Self::SerializeStructVariant;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Writes `value` both ways and compares; returns whether this encoder wrote it itself.
    fn same<T: Serialize + ?Sized>(value: &T) -> bool {
        let mut ours = Vec::new();
        write(&mut ours, value).unwrap();
        let theirs = escape_c1(&serde_json::to_vec(value).unwrap()).into_owned();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs)
        );
        value
            .serialize(&mut Encoder {
                out: &mut Vec::new(),
            })
            .is_ok()
    }

    /// [`event`] writes `ev` as serde_json does.
    fn assert_same_event(ev: &Event) {
        let mut ours = Vec::new();
        event(&mut ours, ev).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&escape_c1(&serde_json::to_vec(ev).unwrap()))
        );
    }

    /// Every event of the recorded transcripts, and events with odd envelopes, encode as serde_json
    /// encodes them.
    #[test]
    fn events_encode_as_serde_json_encodes_them() {
        use std::time::{Duration, SystemTime};

        use crate::event::{EventKind, Turn};
        let kinds = [
            EventKind::Text {
                text: "a \"quoted\"\nline".to_owned(),
            },
            EventKind::SessionStarted {
                session_id: String::new(),
            },
            EventKind::AgentVersion {
                version: "1.2.3".to_owned(),
                tested_with: vec!["1.2.2".to_owned()],
                fidelity: Some(crate::event::Fidelity::Untested),
            },
        ];
        let resumed = Turn {
            index: 3,
            kind: crate::event::TurnKind::Resume,
        };
        // Events one after another share their time, their turn, both or neither: the envelope
        // written for one must never be the next one's.
        for (i, kind) in kinds.into_iter().enumerate() {
            for (seq, secs) in [(0, 0), (u64::MAX, 1_800_000_000), (i as u64, 7), (1, 7)] {
                for turn in [Turn::FIRST, Turn::FIRST, resumed, Turn::FIRST] {
                    let ev = Event {
                        seq,
                        ts: SystemTime::UNIX_EPOCH + Duration::from_micros(secs * 1_000_001),
                        turn,
                        kind: kind.clone(),
                    };
                    assert_same_event(&ev);
                }
            }
        }
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut all: String = (0u8..0x80).map(char::from).collect();
        all.push_str("é中😀\u{7f}\u{2028}\u{80}\u{9b}\u{9f}\u{a0}¬");
        assert!(same(&all));
        let mut ours = Vec::new();
        write(&mut ours, "\u{7f}\u{9b}[31m\u{a0}").unwrap();
        assert_eq!(ours, b"\"\\u007f\\u009b[31m\xc2\xa0\"");
        for s in [
            "",
            "plain",
            "\"",
            "\\",
            "a\"b\\c",
            "tab\there",
            "12345678\n",
            "1234567\"",
            "\x01\x1f",
            "caf\u{e9} \"quoted\" \\ path\\to\n",
        ] {
            assert!(same(s));
            assert!(same(&s.repeat(5)));
        }
        let mut rng = fastrand::Rng::with_seed(7);
        let alphabet = [
            'a', '"', '\\', '\n', '\x01', '\x1f', ' ', 'é', '😀', '\u{7f}', '\u{85}', '\u{9f}',
            '\u{a0}',
        ];
        for _ in 0..2000 {
            let len = rng.usize(0..40);
            let s: String = (0..len)
                .map(|_| alphabet[rng.usize(..alphabet.len())])
                .collect();
            assert!(same(&s));
        }
    }

    #[test]
    fn every_shape_matches_serde_json() {
        #[derive(Serialize)]
        enum E {
            Unit,
            New(u8),
            Tuple(i32, String),
            Struct { a: Option<u8>, b: Vec<u8> },
        }
        #[derive(Serialize)]
        struct Unit;
        #[derive(Serialize)]
        struct Wrapper(String);
        /// Field names that need escapes.
        #[derive(Serialize)]
        struct Odd {
            #[serde(rename = "say \"hi\"\n")]
            quoted: u8,
            #[serde(rename = "back\\slash\u{1}")]
            slashed: u8,
        }
        assert!(same(&Odd {
            quoted: 1,
            slashed: 2
        }));
        #[derive(Serialize)]
        struct S<'a> {
            b: bool,
            n: (i8, i16, i32, i64, u8, u16, u32, u64),
            extremes: (i64, i64, u64),
            f: (f32, f64, f64, f64, f64),
            c: char,
            none: Option<u8>,
            unit: (),
            unit_struct: Unit,
            wrapper: Wrapper,
            variants: Vec<E>,
            empty: Vec<u8>,
            map: BTreeMap<&'a str, Vec<u8>>,
            int_keys: BTreeMap<u8, u8>,
            bytes: serde_bytes_like::Bytes<'a>,
            big: u128,
        }
        mod serde_bytes_like {
            pub(super) struct Bytes<'a>(pub &'a [u8]);
            impl serde::Serialize for Bytes<'_> {
                fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                    s.serialize_bytes(self.0)
                }
            }
        }
        let s = S {
            b: true,
            n: (-8, -16, -32, -64, 8, 16, 32, 64),
            extremes: (i64::MIN, i64::MAX, u64::MAX),
            f: (1.5, 0.1, -2.5e-300, f64::NAN, f64::INFINITY),
            c: '"',
            none: None,
            unit: (),
            unit_struct: Unit,
            wrapper: Wrapper("w\n".into()),
            variants: vec![
                E::Unit,
                E::New(1),
                E::Tuple(-1, "t".into()),
                E::Struct {
                    a: Some(2),
                    b: vec![],
                },
            ],
            empty: vec![],
            map: [("k\"", vec![1]), ("", vec![])].into_iter().collect(),
            int_keys: [(1, 2)].into_iter().collect(),
            bytes: serde_bytes_like::Bytes(b"ab"),
            big: u128::MAX,
        };
        // Integer keys, bytes and u128 are left to serde_json.
        assert!(!same(&s));
        assert!(same(&s.variants));
        assert!(same(&s.map));
    }

    #[test]
    fn every_recorded_event_matches_serde_json() {
        use std::time::{Duration, SystemTime};

        use crate::event::{Event, Turn, TurnKind};

        let mut kinds = recorded_kinds();
        assert!(kinds.len() > 100, "{}", kinds.len());
        kinds.extend(runbook_kinds());
        for (seq, kind) in kinds.into_iter().enumerate() {
            let ev = Event {
                seq: seq as u64,
                ts: SystemTime::UNIX_EPOCH + Duration::from_micros(seq as u64 * 1_234_567),
                turn: Turn {
                    index: 1,
                    kind: TurnKind::Resume,
                },
                kind,
            };
            assert!(same(&ev));
            assert_same_event(&ev);
        }
    }

    /// The kinds written without serde: every tool kind and status, every option present and
    /// absent, strings that need escapes.
    #[test]
    fn the_common_kinds_are_written_as_serde_json_writes_them() {
        use crate::event::{EventKind, ToolEnd, ToolKind, ToolStart, ToolStatus, Turn};

        let kinds = [
            ToolKind::Read,
            ToolKind::Edit,
            ToolKind::Write,
            ToolKind::Shell,
            ToolKind::Search,
            ToolKind::Fetch,
            ToolKind::Subagent,
            ToolKind::Todo,
            ToolKind::Other,
        ];
        let statuses = [ToolStatus::Ok, ToolStatus::Error, ToolStatus::Denied];
        let texts = ["", "ls", "a \"b\"\\c\n\u{1}é😀"];
        let mut all = Vec::new();
        for (i, kind) in kinds.into_iter().enumerate() {
            let text = texts[i % texts.len()];
            let parent = (i % 2 == 0).then(|| format!("p{text}"));
            let start = ToolStart {
                call_id: format!("c{i}{text}"),
                name: text.to_owned(),
                kind,
                input: format!("{text}{text}"),
                parent,
            };
            all.push(EventKind::ToolStarted(start.clone()));
            for (j, status) in statuses.into_iter().enumerate() {
                all.push(EventKind::ToolCompleted(ToolEnd {
                    error: (j > 0).then(|| text.to_owned()),
                    output_bytes: (i % 3 == j).then_some(u64::MAX - j as u64),
                    duration_ms: (j != 1).then_some(i as u64),
                    input_hash: (j != 0).then(|| format!("{text}{j}")),
                    result_hash: (i % 2 == j % 2).then(|| text.to_owned()),
                    ..start.clone().end(status)
                }));
            }
            all.push(EventKind::Text {
                text: text.to_owned(),
            });
        }
        for (seq, kind) in all.into_iter().enumerate() {
            let ev = Event {
                seq: seq as u64,
                ts: std::time::SystemTime::UNIX_EPOCH,
                turn: Turn::FIRST,
                kind,
            };
            assert!(common_kind(&mut Vec::new(), &ev.kind));
            assert_same_event(&ev);
        }
    }

    /// Every event the adapters make of the recorded transcripts in `fixtures/`.
    fn recorded_kinds() -> Vec<crate::event::EventKind> {
        use crate::agent::{Adapter, Claude, Codex, OpenCode, ParseContext};

        let mut kinds = Vec::new();
        let adapters: [(&str, &dyn Adapter); 3] = [
            ("opencode", &OpenCode),
            ("claude", &Claude),
            ("codex", &Codex),
        ];
        for (agent, adapter) in adapters {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures")
                .join(agent);
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.to_string_lossy();
                if name.ends_with(".stdout.ndjson") {
                    let mut parser = adapter.stdout_parser(ParseContext::new("/w".into()));
                    for line in std::fs::read(&path).unwrap().split(|&b| b == b'\n') {
                        parser.line(line, &mut kinds);
                    }
                    parser.end(&mut kinds);
                } else if name.ends_with(".stderr.txt") {
                    let mut parser = adapter.stderr_parser();
                    for line in std::fs::read_to_string(&path).unwrap().lines() {
                        parser.line(line, &mut kinds);
                    }
                }
            }
        }
        kinds
    }

    /// The run's start: every field filled, with strings that need escaping.
    fn run_started() -> crate::event::EventKind {
        use std::time::Duration;

        use crate::event::{EventKind, Limits, RunInfo};
        use crate::provenance::{EnvLayer, EnvVarRecord, Layer, Origin, SettingRecord};

        EventKind::RunStarted(Box::new(RunInfo {
            schema_version: 1,
            run_id: "r".into(),
            runbook_version: "0.1.0".into(),
            agent: "opencode".into(),
            model: Some("m".into()),
            model_file: None,
            prompt: "say \"hi\"\n".into(),
            cwd: "/w".into(),
            run_dir: "/w/runs/r".into(),
            name: None,
            git: None,
            pid: 7,
            pid_start: Some(99),
            limits: Limits {
                inactivity_timeout: Duration::from_secs(1),
                kill_grace: Duration::from_millis(10),
                finish_grace: Duration::from_millis(1500),
                timeout: Some(Duration::from_secs(60)),
                max_cost_usd: Some(0.5),
            },
            settings: vec![SettingRecord {
                key: "prices.\"gpt-5\"".into(),
                value: serde_json::json!({"input": 1.25, "n": -3, "big": u64::MAX,
                    "list": [null, true, "x\ny"], "empty": {}}),
                from: Origin::in_file(Layer::Repo, "/w/runbook.toml".into(), 3, 1),
            }],
            env: vec![EnvVarRecord {
                name: "A".into(),
                layer: EnvLayer::Dotenv,
                file: Some("/w/.env".into()),
                line: Some(2),
            }],
            sandbox: Some(crate::event::Sandbox {
                by: "landlock".into(),
                abi: Some(7),
                not_enforced: Vec::new(),
                write: vec!["/w".into()],
                read_deny: vec!["/home/u/.ssh".into()],
                ports: vec![443, 8080],
                denied: 0,
            }),
        }))
    }

    /// The events runbook itself emits.
    fn runbook_kinds() -> Vec<crate::event::EventKind> {
        use crate::event::{Diagnostic, EventKind, ExitInfo, Outcome};

        let exit = ExitInfo {
            code: Some(1),
            signal: None,
        };
        let diagnostic = Diagnostic {
            timeout_ms: 1,
            stdout_quiet_ms: 2,
            stderr_quiet_ms: 3,
            cpu_quiet_ms: 4,
            last_event: Some("text".into()),
            open_step: None,
            completed_steps: Some(5),
            cost_usd: Some(1.0 / 3.0),
            stderr_tail: vec!["x\ty".into()],
            running_tool: Some("bash cargo test".into()),
        };
        let message = || "m".to_owned();
        vec![
            run_started(),
            EventKind::TurnStarted {
                argv: vec!["a".into(), "b c".into()],
                pid: 3,
                planning: true,
                steps_unreported: true,
                prompt: Some("fix\nit".into()),
            },
            EventKind::WatchdogWarning {
                quiet_ms: 1,
                timeout_ms: 2,
            },
            EventKind::SandboxDenied {
                call_id: Some("c1".into()),
                source: "bash".into(),
                detail: "cannot create /etc/x: Permission denied".into(),
            },
            EventKind::WatchdogResumed {
                by: crate::event::ActivitySign::Cpu,
                cpu_percent: Some(12),
            },
            EventKind::WatchdogResumed {
                by: crate::event::ActivitySign::Stdout,
                cpu_percent: None,
            },
            EventKind::WatchdogFired(Box::new(diagnostic)),
            EventKind::StopRequested {
                reason: Outcome::BudgetExceeded,
                message: message(),
            },
            EventKind::SignalSent {
                signal: "SIGTERM".into(),
                processes: 2,
            },
            EventKind::TurnCompleted {
                exit: ExitInfo::default(),
            },
            EventKind::TurnFailed {
                outcome: Outcome::Hung,
                message: message(),
                exit,
            },
            EventKind::RunFinished {
                outcome: Outcome::AgentError,
                message: message(),
                duration_ms: 12,
                exit,
            },
        ]
    }
}
