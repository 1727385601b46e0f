//! `neardup._neardup.JsonlReader`: JSONL files of pages (gzip or plain, told by their first
//! bytes) read by the command line's reader (`neardup-input`'s `JsonlReader`, serde_json), for
//! `neardup.ray`'s S1 (SCALEOUT §5 S1; issue #34, item 3). A line that is no record (not UTF-8,
//! not JSON, not an object, a lone surrogate, over the length limit, a broken gzip stream) is
//! the reason `neardup ingest` gives, with its line; a record is either a whole dict
//! (`next_rows`, for `neardup.ray.read_pages`) or, for S1, the columns of a part of `s1/` checked
//! as `neardup._rows._row` checks a row (`next_block`): no Python dict a row.

use std::path::PathBuf;
use std::sync::Mutex;

use neardup_input::input::{self, JsonFields, JsonlReader, Limit};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString};
use serde_json::Value;

/// Content bytes a block holds at most, past its first record (as the archive reader's).
const BLOCK_BYTES: usize = 64 << 20;

/// Records of a file, each with its line: a dict, or why the line is no record.
type Rows<'py> = Vec<(usize, Bound<'py, PyAny>)>;

/// A block of S1: the part's columns, the lines that are no record (line, reason), and the
/// rows whose fields are of types only Python checks (row in the block, their fields).
type Block<'py> = (
    Bound<'py, PyDict>,
    Vec<(usize, String)>,
    Vec<(usize, Bound<'py, PyDict>)>,
);

/// The pages of a JSONL file, read in blocks: ``next_rows`` gives each record as a dict (or why
/// the line is no record), ``next_block`` the columns S1 writes; both number records by line
/// (from 1; blank lines are skipped) and return ``None`` once the file is read.
#[pyclass(name = "JsonlReader", module = "neardup._neardup")]
pub(crate) struct PyJsonlReader {
    /// Never locked (the methods take the reader mutably, so PyO3 refuses a second caller while
    /// one reads): the `Mutex` only makes the class `Sync`.
    reader: Mutex<JsonlReader>,
}

#[pymethods]
impl PyJsonlReader {
    /// Opens ``path`` (gzip when it starts with gzip's magic bytes); lines longer than
    /// ``neardup ingest`` reads for pages of ``max_page_bytes`` (the signature option's default
    /// when ``None``) are no records. Raises ``InvalidArgumentError`` when ``max_page_bytes``
    /// is 0, ``OSError`` when the file cannot be opened.
    #[new]
    #[pyo3(signature = (path, max_page_bytes=None))]
    fn new(py: Python<'_>, path: PathBuf, max_page_bytes: Option<usize>) -> PyResult<Self> {
        let max_page_bytes = crate::archive::page_limit(py, max_page_bytes)?;
        let reader = JsonlReader::new(&path, input::max_line(max_page_bytes))
            .map_err(|e| PyOSError::new_err(format!("{e:#}")))?;
        Ok(Self {
            reader: Mutex::new(reader),
        })
    }

    /// Up to ``rows`` records (and 64 MiB of page content past the first), each ``(line,
    /// row)``: ``row`` the line's JSON object as a dict, or why the line is no record (a str).
    fn next_rows<'py>(&mut self, py: Python<'py>, rows: usize) -> PyResult<Option<Rows<'py>>> {
        let reader = self.reader.get_mut().unwrap_or_else(|e| e.into_inner());
        if reader.is_done() {
            return Ok(None);
        }
        let got = py.detach(|| reader.next_records(limit(rows), input::parse_object, map_size));
        let mut out = Vec::with_capacity(got.len());
        for (line, record) in got {
            let row = match record {
                Ok(map) => object(py, &map)?.into_any(),
                Err(reason) => PyString::new(py, &reason).into_any(),
            };
            out.push((line, row));
        }
        Ok(Some(out))
    }

    /// Up to ``rows`` records (and 64 MiB of page content past the first) as S1's part
    /// columns (``line``, ``key``, ``host``, ``time``, ``is_html``, ``html``, ``text``,
    /// ``bad``, ``signed``: lists, each row checked as ``neardup._rows._row`` and S1 check it),
    /// the lines that are no record as ``(line, reason)``, and the rows whose fields are of
    /// other types than strings (and an integer ``time``) as ``(row, fields)``: their columns
    /// are placeholders, for the caller to check ``fields`` (a dict of the fields given) as
    /// ``insert_many`` would.
    fn next_block<'py>(&mut self, py: Python<'py>, rows: usize) -> PyResult<Option<Block<'py>>> {
        let reader = self.reader.get_mut().unwrap_or_else(|e| e.into_inner());
        if reader.is_done() {
            return Ok(None);
        }
        let got = py.detach(|| {
            reader
                .next_records(limit(rows), input::parse_fields, fields_size)
                .into_iter()
                .map(|(line, r)| (line, r.map(check)))
                .collect::<Vec<_>>()
        });
        let n = got.iter().filter(|(_, r)| r.is_ok()).count();
        let mut lines = Vec::with_capacity(n);
        let mut keys = Vec::with_capacity(n);
        let mut hosts = Vec::with_capacity(n);
        let mut times = Vec::with_capacity(n);
        let mut is_html = Vec::with_capacity(n);
        let mut html: Vec<Option<Bound<'py, PyBytes>>> = Vec::with_capacity(n);
        let mut text = Vec::with_capacity(n);
        let mut bad = Vec::with_capacity(n);
        let mut signed = Vec::with_capacity(n);
        let mut unreadable = Vec::new();
        let mut odd = Vec::new();
        for (line, record) in got {
            let row = match record {
                Err(reason) => {
                    unreadable.push((line, reason));
                    continue;
                }
                Ok(Checked::Odd(fields)) => {
                    odd.push((lines.len(), field_dict(py, fields)?));
                    Row::default()
                }
                Ok(Checked::Row(row)) => row,
            };
            lines.push(line);
            keys.push(row.key);
            hosts.push(row.host);
            times.push(row.time);
            is_html.push(row.is_html);
            html.push(row.html.map(|h| PyBytes::new(py, &h)));
            text.push(row.text);
            bad.push(row.bad);
            signed.push(row.signed);
        }
        let cols = PyDict::new(py);
        cols.set_item("line", lines)?;
        cols.set_item("key", keys)?;
        cols.set_item("host", hosts)?;
        cols.set_item("time", times)?;
        cols.set_item("is_html", is_html)?;
        cols.set_item("html", html)?;
        cols.set_item("text", text)?;
        cols.set_item("bad", bad)?;
        cols.set_item("signed", signed)?;
        Ok(Some((cols, unreadable, odd)))
    }

    /// One JSONL line read as ``next_rows`` reads it: the object as a dict, or why the line is
    /// no record (a str).
    #[staticmethod]
    fn parse<'py>(py: Python<'py>, line: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        Ok(match input::parse_object(line) {
            Ok(map) => object(py, &map)?.into_any(),
            Err(reason) => PyString::new(py, &reason).into_any(),
        })
    }
}

/// A block's limit: `rows` records, 64 MiB of content past the first.
fn limit(rows: usize) -> Limit {
    Limit {
        pages: rows.max(1),
        bytes: BLOCK_BYTES,
    }
}

/// The page content of a JSON object (its `html`, else its `text`), in bytes.
fn map_size(map: &serde_json::Map<String, Value>) -> usize {
    let body = map.get("html").filter(|v| !v.is_null()).or(map.get("text"));
    body.and_then(Value::as_str).map_or(0, str::len)
}

/// The page content of a record's fields, in bytes.
fn fields_size(f: &JsonFields) -> usize {
    f.html
        .as_ref()
        .or(f.text.as_ref())
        .and_then(Value::as_str)
        .map_or(0, str::len)
}

/// A record checked for S1: its part columns, or fields only Python checks as `insert_many`
/// does (of types other than strings and an integer time: `int("12")`, floats, ...).
enum Checked {
    Row(Row),
    Odd(JsonFields),
}

/// A row's columns in a part of `s1/` (see `neardup.ray._sign.part_schema`).
#[derive(Default)]
struct Row {
    key: Option<String>,
    host: String,
    time: i64,
    is_html: bool,
    html: Option<Vec<u8>>,
    text: Option<String>,
    bad: Option<String>,
    signed: bool,
}

/// A record's fields checked as `neardup._rows._row` and `neardup.ray._sign` check a row
/// (SCALEOUT §5 S1; the Python tests hold the two to the same error rows): the key is `id`,
/// else `url` (an empty string counts as none); the host is `host`, else the URL's host; the
/// time 0 when missing, a time past 64 bits an error row; the body `html`, else `text`. A row
/// without a key or a body is kept, with why it cannot be a page (`bad`).
fn check(f: JsonFields) -> Checked {
    let plain = |v: &Option<Value>| matches!(v, None | Some(Value::String(_)));
    let whole = f.time.as_ref().is_none_or(|t| t.is_i64() || t.is_u64());
    if !(plain(&f.id)
        && plain(&f.url)
        && plain(&f.host)
        && plain(&f.html)
        && plain(&f.text)
        && whole)
    {
        return Checked::Odd(f);
    }
    let string = |v: Option<Value>| match v {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    let url = string(f.url).filter(|u| !u.is_empty());
    let key = string(f.id)
        .filter(|k| !k.is_empty())
        .or_else(|| url.clone());
    let host = string(f.host).unwrap_or_else(|| {
        url.as_deref()
            .map_or(String::new(), |u| neardup::host_of(u).into())
    });
    let (html, text) = (string(f.html), string(f.text));
    let mut bad = match &key {
        None => Some("no `id` (or `url`)".to_string()),
        Some(k) if html.is_none() && text.is_none() => {
            Some(format!("page {k} has neither `html` nor `text`"))
        }
        Some(_) => None,
    };
    let time = match f.time {
        None => 0,
        Some(t) => t.as_i64().unwrap_or_else(|| {
            // The library takes 64-bit times: an error row, not an error of the day.
            bad.get_or_insert_with(|| {
                format!("the time must be an integer (Unix seconds) of 64 bits, not {t}")
            });
            0
        }),
    };
    let (is_html, html, text) = match (html, text) {
        (Some(h), _) => (true, Some(h.into_bytes()), None),
        (None, t) => (false, None, t),
    };
    let signed = html.is_some() || text.is_some();
    Checked::Row(Row {
        key,
        host,
        time,
        is_html,
        html,
        text,
        bad,
        signed,
    })
}

/// The fields a record gives, as a dict of Python values.
fn field_dict(py: Python<'_>, f: JsonFields) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (name, v) in [
        ("id", f.id),
        ("url", f.url),
        ("host", f.host),
        ("time", f.time),
        ("html", f.html),
        ("text", f.text),
    ] {
        if let Some(v) = v {
            d.set_item(name, value(py, &v)?)?;
        }
    }
    Ok(d)
}

/// A JSON object as a dict.
fn object<'py>(
    py: Python<'py>,
    map: &serde_json::Map<String, Value>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in map {
        d.set_item(k, value(py, v)?)?;
    }
    Ok(d)
}

/// A JSON value as the Python value `json.loads` gives (an integer past 64 bits is read as a
/// float by serde_json).
fn value<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let items = a
                .iter()
                .map(|x| value(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(m) => object(py, m)?.into_any(),
    })
}
