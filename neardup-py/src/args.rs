//! Arguments taken from Python with neardup's exceptions: a value of the wrong type raises
//! `InvalidTypeError` (an `InvalidArgumentError` and a `TypeError`), an int out of range
//! `InvalidArgumentError` (a `ValueError`), each with a message naming the argument — where
//! PyO3's own extraction would raise a bare `TypeError` or `OverflowError`. One function per
//! argument name and type, for `#[pyo3(from_py_with = args::<name>)]`.

use std::collections::HashMap;
use std::path::PathBuf;

use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;

use crate::errors::{invalid, invalid_type};
use crate::type_name;

/// `obj` as a `T`, or our exception: `name must be {expected}, not {type}`.
pub(crate) fn arg<'a, 'py, T>(obj: &'a Bound<'py, PyAny>, name: &str, expected: &str) -> PyResult<T>
where
    T: FromPyObject<'a, 'py>,
    T::Error: Into<PyErr>,
{
    obj.extract::<T>().map_err(|e| {
        let e: PyErr = e.into();
        let py = obj.py();
        if e.is_instance_of::<PyOverflowError>(py) || e.is_instance_of::<PyValueError>(py) {
            let shown = obj
                .repr()
                .map(|r| r.to_string())
                .unwrap_or_else(|_| "?".into());
            invalid(
                py,
                format!("{name} must be {expected}: {shown} is out of range"),
            )
        } else {
            invalid_type(
                py,
                format!("{name} must be {expected}, not {}", type_name(obj)),
            )
        }
    })
}

/// The argument `name`: ``bytes``, borrowed, not copied (a work unit's log may be
/// gigabytes).
pub(crate) fn borrowed<'a>(obj: &'a Bound<'_, PyAny>, name: &str) -> PyResult<&'a [u8]> {
    obj.cast::<pyo3::types::PyBytes>()
        .map(|b| b.as_bytes())
        .map_err(|_| {
            invalid_type(
                obj.py(),
                format!("{name} must be bytes, not {}", crate::type_name(obj)),
            )
        })
}

/// Defines `fn $f(obj) -> PyResult<$ty>` extracting the argument `$f` (or `$name`) as
/// `$expected`.
macro_rules! args {
    ($($f:ident $(($name:literal))?: $ty:ty => $expected:literal;)*) => {
        $(
            #[doc = concat!("The argument `", stringify!($f), "`: ", $expected, ".")]
            pub(crate) fn $f(obj: &Bound<'_, PyAny>) -> PyResult<$ty> {
                arg(obj, args!(@name $f $($name)?), $expected)
            }
        )*
    };
    (@name $f:ident $name:literal) => { $name };
    (@name $f:ident) => { stringify!($f) };
}

args! {
    key: String => "a str";
    opt_key("key"): Option<String> => "a str or None";
    host: Option<String> => "a str or None";
    time: i64 => "an int (Unix seconds)";
    path: PathBuf => "a str or os.PathLike";
    dir: PathBuf => "a str or os.PathLike";
    read_only: bool => "a bool";
    cluster: u32 => "a cluster id (an int from 0 to 2**32 - 1)";
    offset: usize => "an int of at least 0";
    limit: Option<usize> => "an int of at least 0, or None";
    sample: Option<u64> => "an int of at least 0, or None";
    k: Option<usize> => "an int of at least 1, or None";
    threshold: Option<f64> => "a number from 0 to 1, or None";
    by: String => "\"resemble\" or \"contain\"";
    default: Option<Py<PyAny>> => "any value";
    first: u32 => "a page id (an int from 0 to 2**32 - 1)";
    chunk: usize => "an int of at least 1";
    since: u64 => "a change's sequence number (an int of at least 0)";
    pages: Vec<u32> => "a list of page ids";
    clusters: Vec<u32> => "a list of cluster ids";
    ids: Vec<u32> => "a list of page ids";
    wide_pages("pages"): Vec<u64> => "a list of page ids (ints from 0 to 2**64 - 1)";
    wide_clusters("clusters"): Vec<u64> => "a list of cluster ids (ints from 0 to 2**64 - 1)";
    wide_ids("ids"): Vec<u64> => "a list of page ids (ints from 0 to 2**64 - 1)";
    keys: Vec<String> => "a list of str";
    gone: Vec<String> => "a list of str";
    is_html: bool => "a bool";
    batch: u64 => "an int of at least 0";
    log: Vec<u8> => "bytes";
    before: Vec<u8> => "bytes";
    before_file("before"): PathBuf => "a str or os.PathLike";
    after: Vec<u8> => "bytes";
    logs: Vec<Vec<u8>> => "a list of bytes";
    head: Vec<u8> => "bytes";
    pieces: Vec<PathBuf> => "a list of str or os.PathLike";
    out_file("out"): PathBuf => "a str or os.PathLike";
    packed: Vec<u8> => "bytes";
    simhashes: Vec<u64> => "a list of 64-bit ints";
    on: bool => "a bool";
    role: String => "\"key\" or \"doc\"";
    part: u32 => "a partition number (an int from 0 to 2**32 - 1)";
    key_parts: u32 => "an int from 1 to 2**32 - 1";
    doc_parts: u32 => "an int from 1 to 2**32 - 1";
    simhash_max_distance: u32 => "1, 3 or 7";
    id: u64 => "an id (an int from 0 to 2**64 - 1)";
    live_docs: u64 => "an int of at least 0";
    live_clusters: u64 => "an int of at least 0";
    a: String => "a str";
    b: String => "a str";
    url: String => "a str";
    base: HashMap<String, u64> => "a dict of str to int";
    maps: Option<Vec<HashMap<String, Vec<u64>>>> => "a list of dicts of str to lists of ints, or None";
    map: HashMap<String, Vec<u64>> => "a dict of str to lists of ints";
    unit: usize => "a work unit's number (an int of at least 0)";
    totals: Vec<HashMap<String, i64>> => "a list of dicts of str to int";
}
