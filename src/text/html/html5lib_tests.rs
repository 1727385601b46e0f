//! The html5lib-tests tokenizer suite against our tokenizer, where it applies.
//!
//! The suite's data comes with the html5lib source distribution on PyPI; `scripts/setup.sh`
//! unpacks its `tokenizer/*.test` files into `html5lib-tests/tokenizer` in the target directory
//! (`NEARDUP_HTML5LIB_TESTS` names another folder).
//!
//! What our tokenizer leaves out by design (see [`super::tokenizer`]) is left out of the
//! comparison: parse errors are not compared; comments are compared as comments, without their
//! text; inputs with U+0000 or U+FEFF (such pages go to the reference parser) and the suite's
//! "double escaped" tests (lone surrogates) are skipped, as is the CDATA section state (foreign
//! content only). Input is newline-normalized first, as the standard's input stream does.

use std::borrow::Cow;
use std::path::PathBuf;

use serde_json::Value;

use super::tokenizer::{RawKind, Token, Tokenizer};

/// A token as the suite writes it: kind, then fields.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Doctype(Option<String>, Option<String>, Option<String>, bool),
    Start(String, Vec<(String, String)>, bool),
    End(String),
    Comment,
    Text(String),
}

/// The suite's folder (`NEARDUP_HTML5LIB_TESTS`, else `html5lib-tests/tokenizer` in the target
/// directory), `None` when it is not there.
fn suite_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("NEARDUP_HTML5LIB_TESTS").map_or_else(
        || {
            let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
                || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target")),
                PathBuf::from,
            );
            target.join("html5lib-tests/tokenizer")
        },
        PathBuf::from,
    );
    dir.is_dir().then_some(dir)
}

/// Adjacent text tokens joined, as the suite's expected output has them.
fn joined(tokens: Vec<Tok>) -> Vec<Tok> {
    let mut out: Vec<Tok> = Vec::new();
    for t in tokens {
        match (out.last_mut(), t) {
            (Some(Tok::Text(a)), Tok::Text(b)) => a.push_str(&b),
            (_, t) => out.push(t),
        }
    }
    out
}

/// The suite's expected tokens.
fn expected(output: &[Value]) -> Option<Vec<Tok>> {
    let s = |v: &Value| v.as_str().map(str::to_string);
    let mut out = Vec::new();
    for t in output {
        let a = t.as_array()?;
        out.push(match a.first()?.as_str()? {
            "DOCTYPE" => Tok::Doctype(
                s(a.get(1)?),
                s(a.get(2)?),
                s(a.get(3)?),
                !a.get(4)?.as_bool()?,
            ),
            "StartTag" => {
                let mut attrs: Vec<(String, String)> = a
                    .get(2)?
                    .as_object()?
                    .iter()
                    .map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect::<Option<_>>()?;
                attrs.sort();
                let self_closing = a.get(3).and_then(Value::as_bool).unwrap_or(false);
                Tok::Start(a.get(1)?.as_str()?.to_string(), attrs, self_closing)
            }
            "EndTag" => Tok::End(a.get(1)?.as_str()?.to_string()),
            "Comment" => Tok::Comment,
            "Character" => Tok::Text(a.get(1)?.as_str()?.to_string()),
            _ => return None,
        });
    }
    Some(joined(out))
}

/// Our tokens for `input`, starting in `state` (`None`: the data state).
fn ours(input: &str, state: Option<(RawKind, &str)>) -> Vec<Tok> {
    let mut tok = Tokenizer::new(input);
    if let Some((kind, last)) = state {
        tok.set_raw(kind, last);
    }
    let mut out = Vec::new();
    loop {
        out.push(match tok.next_token() {
            Token::Eof => break,
            Token::Doctype(d) => Tok::Doctype(d.name, d.public_id, d.system_id, d.force_quirks),
            Token::Start(t) => {
                let mut attrs: Vec<(String, String)> = t
                    .attrs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                attrs.sort();
                Tok::Start(t.name.to_string(), attrs, t.self_closing)
            }
            Token::End(n) => Tok::End(n.to_string()),
            Token::Comment => Tok::Comment,
            Token::Text(t) => Tok::Text(t.to_string()),
        });
    }
    joined(out)
}

/// CR LF and CR become LF, as the standard's input stream makes them.
fn newline_normalized(s: &str) -> Cow<'_, str> {
    if s.contains('\r') {
        Cow::Owned(s.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(s)
    }
}

#[test]
fn html5lib_tokenizer_suite_passes_where_it_applies() {
    let Some(dir) = suite_dir() else {
        panic!(
            "the html5lib-tests tokenizer suite is not in target/html5lib-tests/tokenizer: \
             scripts/setup.sh unpacks it (scripts/test.sh runs it first)"
        );
    };
    let (mut passed, mut skipped, mut failed) = (0usize, 0usize, Vec::new());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "test"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .test files in {}", dir.display());
    for file in &files {
        let suite: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let Some(tests) = suite["tests"].as_array() else {
            continue;
        };
        for t in tests {
            let input = t["input"].as_str().unwrap_or("");
            let Some(want) = t["output"].as_array().and_then(|o| expected(o)) else {
                skipped += 1;
                continue;
            };
            if t["doubleEscaped"].as_bool() == Some(true)
                || input.contains('\0')
                || input.contains('\u{feff}')
            {
                skipped += 1;
                continue;
            }
            let input = newline_normalized(input);
            let last = t["lastStartTag"].as_str().unwrap_or("\u{1}");
            let states: Vec<&str> = t["initialStates"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_else(|| vec!["Data state"]);
            for state in states {
                let start = match state {
                    "Data state" => None,
                    "PLAINTEXT state" => Some((RawKind::Plaintext, last)),
                    "RCDATA state" => Some((RawKind::Rcdata, last)),
                    "RAWTEXT state" => Some((RawKind::Rawtext, last)),
                    "Script data state" => Some((RawKind::ScriptData, last)),
                    _ => {
                        skipped += 1;
                        continue;
                    }
                };
                // Script data is entered only after `<script>`: its end tag is `</script>`.
                if state == "Script data state" && !last.eq_ignore_ascii_case("script") {
                    skipped += 1;
                    continue;
                }
                let mut got = ours(&input, start);
                let mut want = want.clone();
                // `</>` gives a comment on purpose (see `Tokenizer::markup`): compared without
                // comments.
                if input.contains("</>") {
                    got = joined(got.into_iter().filter(|t| *t != Tok::Comment).collect());
                    want = joined(want.into_iter().filter(|t| *t != Tok::Comment).collect());
                }
                if got == want {
                    passed += 1;
                } else {
                    failed.push(format!(
                        "{} / {} / {state}: input {input:?}\n  want {want:?}\n  got  {got:?}",
                        file.file_name().unwrap_or_default().to_string_lossy(),
                        t["description"].as_str().unwrap_or("")
                    ));
                }
            }
        }
    }
    eprintln!(
        "html5lib tokenizer tests: {passed} passed, {} failed, {skipped} skipped",
        failed.len()
    );
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
