//! JSONL records read as JSON objects for a caller that checks their fields itself (the
//! distributed merge's S1, SCALEOUT §5 S1): a line is an object, or the reason it is none —
//! the reasons [`crate::input::JsonlReader`] gives the command line, with the kind of a value
//! that is no object named as Python names it.

use serde::Deserialize;

/// The page fields of a JSONL record as JSON values, not yet checked (`None`: absent or
/// `null`), for a caller that checks them itself (the distributed merge's S1, which keeps a
/// record of the wrong fields as an error row of its own). Other fields are skipped unread.
#[derive(Debug, Default, PartialEq)]
pub struct JsonFields {
    pub id: Option<serde_json::Value>,
    pub url: Option<serde_json::Value>,
    pub host: Option<serde_json::Value>,
    pub time: Option<serde_json::Value>,
    pub html: Option<serde_json::Value>,
    pub text: Option<serde_json::Value>,
}

/// A JSONL line read as a JSON object of page fields ([`JsonFields`]), or why it is no
/// record: not UTF-8, not JSON, JSON that is not an object, or a string (anywhere in it) holding
/// a lone UTF-16 surrogate — the reasons of [`parse_page`]'s first steps, with the kind of a
/// value that is no object named as Python names it (`a list, not an object`). A field given
/// twice counts as its last value, as JSON readers that keep the last do.
///
/// # Errors
/// The reason, as a string.
pub fn parse_fields(line: &[u8]) -> std::result::Result<JsonFields, String> {
    read_object(line)
}

/// A JSONL line read as a whole JSON object (every field), or why it is no record (the
/// reasons of [`parse_fields`]).
///
/// # Errors
/// The reason, as a string.
pub fn parse_object(
    line: &[u8],
) -> std::result::Result<serde_json::Map<String, serde_json::Value>, String> {
    read_object(line)
}

fn read_object<T: FromObject>(line: &[u8]) -> std::result::Result<T, String> {
    let text = std::str::from_utf8(line).map_err(|e| format!("line is not UTF-8 ({e})"))?;
    if let Some(reason) = lone_surrogate(line, text) {
        return Err(reason);
    }
    match serde_json::from_str::<Top<T>>(text) {
        Ok(Top(Ok(object))) => Ok(object),
        Ok(Top(Err(kind))) => Err(format!("malformed JSON: a {kind}, not an object")),
        Err(e) => Err(format!("malformed JSON: {e}")),
    }
}

/// Why a line is no record when one of its strings holds a lone UTF-16 surrogate (no UTF-8
/// text can hold one); `None` when none does. Only a line with an escape of a surrogate
/// (`\uD800`–`\uDFFF`) is read twice for it.
fn lone_surrogate(line: &[u8], text: &str) -> Option<String> {
    let escaped = line.windows(4).any(|w| {
        w[0] == b'\\'
            && w[1] == b'u'
            && matches!(w[2], b'd' | b'D')
            && matches!(w[3], b'8' | b'9' | b'a'..=b'f' | b'A'..=b'F')
    });
    if !escaped {
        return None;
    }
    let e = serde_json::from_str::<serde_json::Value>(text).err()?;
    let msg = e.to_string();
    if !msg.starts_with("lone leading surrogate")
        && !msg.starts_with("unexpected end of hex escape")
    {
        return None;
    }
    // Valid JSON but for its surrogates (a reading that does not check them)?
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        return Some(format!("malformed JSON: {e}"));
    }
    Some(match text.trim_start().as_bytes().first() {
        Some(b'[') => "malformed JSON: a list, not an object".into(),
        Some(b'"') => "malformed JSON: a str, not an object".into(),
        _ => "malformed JSON: a string holds a lone UTF-16 surrogate".into(),
    })
}

/// What a JSON object is read into by [`read_object`].
trait FromObject: Sized {
    fn from_map<'de, A: serde::de::MapAccess<'de>>(map: A) -> std::result::Result<Self, A::Error>;
}

impl FromObject for serde_json::Map<String, serde_json::Value> {
    fn from_map<'de, A: serde::de::MapAccess<'de>>(map: A) -> std::result::Result<Self, A::Error> {
        Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(map))
    }
}

impl FromObject for JsonFields {
    fn from_map<'de, A: serde::de::MapAccess<'de>>(
        mut map: A,
    ) -> std::result::Result<Self, A::Error> {
        #[derive(Deserialize)]
        #[serde(field_identifier, rename_all = "lowercase")]
        enum Field {
            Id,
            Url,
            Host,
            Time,
            Html,
            Text,
            #[serde(other)]
            Other,
        }
        let mut f = JsonFields::default();
        while let Some(key) = map.next_key::<Field>()? {
            let slot = match key {
                Field::Id => &mut f.id,
                Field::Url => &mut f.url,
                Field::Host => &mut f.host,
                Field::Time => &mut f.time,
                Field::Html => &mut f.html,
                Field::Text => &mut f.text,
                Field::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
            };
            let v: serde_json::Value = map.next_value()?;
            *slot = (!v.is_null()).then_some(v);
        }
        Ok(f)
    }
}

/// A JSON value that is an object read as `T`, or the Python name of its kind.
struct Top<T>(std::result::Result<T, &'static str>);

impl<'de, T: FromObject> Deserialize<'de> for Top<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: FromObject> serde::de::Visitor<'de> for V<T> {
            type Value = Top<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> std::result::Result<Top<T>, A::Error> {
                T::from_map(map).map(|t| Top(Ok(t)))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Top<T>, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Top(Err("list")))
            }
            fn visit_str<E>(self, _: &str) -> std::result::Result<Top<T>, E> {
                Ok(Top(Err("str")))
            }
            fn visit_i64<E>(self, _: i64) -> std::result::Result<Top<T>, E> {
                Ok(Top(Err("int")))
            }
            fn visit_u64<E>(self, _: u64) -> std::result::Result<Top<T>, E> {
                Ok(Top(Err("int")))
            }
            fn visit_f64<E>(self, _: f64) -> std::result::Result<Top<T>, E> {
                Ok(Top(Err("float")))
            }
            fn visit_bool<E>(self, _: bool) -> std::result::Result<Top<T>, E> {
                Ok(Top(Err("bool")))
            }
            fn visit_unit<E>(self) -> std::result::Result<Top<T>, E> {
                Ok(Top(Err("NoneType")))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_as_python_reads_the_line() {
        let f = parse_fields(
            br#"{"id": "a", "time": 5, "html": "<p>", "x": [1, {"y": 2}], "id": "b"}"#,
        )
        .unwrap();
        // The last of a field given twice, as json.loads keeps it; null is none.
        assert_eq!(f.id, Some(serde_json::json!("b")));
        assert_eq!(f.time, Some(serde_json::json!(5)));
        assert_eq!(
            parse_fields(br#"{"url": null}"#).unwrap(),
            JsonFields::default()
        );
        // Ill-typed fields are kept, for the caller to check.
        assert_eq!(
            parse_fields(br#"{"time": "12"}"#).unwrap().time,
            Some(serde_json::json!("12"))
        );
        let reason = |line: &[u8]| parse_fields(line).err().unwrap();
        assert!(reason(b"caf\xe9").starts_with("line is not UTF-8"));
        assert!(reason(b"{not json").starts_with("malformed JSON: "));
        assert_eq!(reason(b"[1, 2]"), "malformed JSON: a list, not an object");
        assert_eq!(reason(b"\"s\""), "malformed JSON: a str, not an object");
        assert_eq!(reason(b"3"), "malformed JSON: a int, not an object");
        assert_eq!(reason(b"null"), "malformed JSON: a NoneType, not an object");
        // A lone surrogate anywhere (a field read or not, a key) makes no record; a pair does.
        let lone = "malformed JSON: a string holds a lone UTF-16 surrogate";
        assert_eq!(reason(br#"{"id": "a", "text": "x \ud800 y"}"#), lone);
        assert_eq!(
            reason(br#"{"id": "a", "text": "t", "other": "\udc00"}"#),
            lone
        );
        assert_eq!(reason(br#"{"\ud800": 1}"#), lone);
        assert_eq!(
            reason(br#"["\ud800"]"#),
            "malformed JSON: a list, not an object"
        );
        assert!(reason(br#"{"x": "\ud800", oops}"#).starts_with("malformed JSON: key must"));
        assert!(parse_fields(br#"{"id": "a", "text": "\ud83d\ude00 \\ud800"}"#).is_ok());
        let all = parse_object(br#"{"id": "a", "n": [1, 2.5, true]}"#).unwrap();
        assert_eq!(all["n"], serde_json::json!([1, 2.5, true]));
    }
}
