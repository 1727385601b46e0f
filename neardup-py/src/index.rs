//! `neardup._neardup._Index`: a handle on one index, the base class of `neardup.Index`.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::RwLock;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::args;
use crate::errors::{invalid, invalid_type, to_py, IntoPy};
use crate::types::{Change, Deletion, NearDuplicate, PageInfo, Verdict};
use crate::{options, Body};
use neardup::{
    BatchOptions, BatchOrder, Index, IndexOptions, NearOptions, OrderScope, Page, Score,
};

/// A page's simhash and its posting keys, concatenated (`filed_pages`).
type FiledPy<'py> = (u64, Bound<'py, PyBytes>);

/// What `pickle` says when asked to copy an index handle.
const NOT_PICKLABLE: &str = "neardup.Index cannot be pickled: open the index inside the actor, \
                             or in the stage's setup()";

/// An open neardup index (the base class of ``neardup.Index``; see its documentation).
#[pyclass(subclass, frozen, name = "_Index", module = "neardup._neardup")]
pub(crate) struct PyIndex {
    /// The index, until `close()`. Calls take a clone of the `Arc` and let the lock go before
    /// they release the GIL, so a close waits for no call and the index closes when the last
    /// call using it returns.
    inner: RwLock<Option<Arc<Index>>>,
    /// The path it was opened with.
    path: PathBuf,
}

impl PyIndex {
    /// The open index, or `InvalidArgumentError` once closed.
    pub(crate) fn ix(&self, py: Python<'_>) -> PyResult<Arc<Index>> {
        self.inner.read().clone().ok_or_else(|| {
            invalid(
                py,
                format!("the index at {} is closed", self.path.display()),
            )
        })
    }
}

/// One page of a batch, owned.
struct Owned {
    key: String,
    host: String,
    time: i64,
    body: Body,
}

impl Owned {
    /// The page, borrowed.
    fn page(&self) -> Page<'_> {
        Page {
            key: &self.key,
            host: &self.host,
            time: self.time,
            content: self.body.content(),
        }
    }
}

/// The input columns of a batch: keys, hosts and times (lists of equal length), bodies (bytes
/// or str items), whether the bodies are HTML.
fn owned_pages(
    keys: &Bound<'_, PyList>,
    hosts: &Bound<'_, PyList>,
    times: &Bound<'_, PyList>,
    bodies: &Bound<'_, PyList>,
    is_html: bool,
) -> PyResult<Vec<Owned>> {
    let py = keys.py();
    let n = keys.len();
    if hosts.len() != n || times.len() != n || bodies.len() != n {
        return Err(invalid(
            py,
            "keys, hosts, times and bodies differ in length",
        ));
    }
    let mut pages = Vec::with_capacity(n);
    for i in 0..n {
        pages.push(Owned {
            key: keys.get_item(i)?.extract::<String>()?,
            host: hosts.get_item(i)?.extract::<String>()?,
            time: times.get_item(i)?.extract::<i64>()?,
            body: Body::of_item(&bodies.get_item(i)?, is_html)?,
        });
    }
    Ok(pages)
}

/// The main texts of a batch's rows (`_insert_batch`'s `mains`): None, or bytes that
/// `MainText::decode` reads; a row whose item is neither is an error of its own
/// (`InvalidArgument`), not of the batch.
fn decoded_mains(
    list: &Bound<'_, PyList>,
) -> PyResult<Vec<neardup::Result<Option<neardup::text::MainText>>>> {
    let mut out = Vec::with_capacity(list.len());
    for item in list.iter() {
        out.push(if item.is_none() {
            Ok(None)
        } else if let Ok(b) = item.cast::<PyBytes>() {
            neardup::text::MainText::decode(b.as_bytes())
                .map(Some)
                .map_err(|e| neardup::Error::InvalidArgument(format!("main_text: {e}")))
        } else {
            Err(neardup::Error::InvalidArgument(format!(
                "main_text must be bytes, not {}",
                crate::type_name(&item)
            )))
        });
    }
    Ok(out)
}

/// Verdicts (or errors) as columns: the output of `insert_many` and `query_many` before it
/// becomes an Arrow table.
fn verdict_columns<'py>(
    py: Python<'py>,
    results: Vec<neardup::Result<neardup::Verdict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let n = results.len();
    let mut duplicate = Vec::with_capacity(n);
    let mut doc = Vec::with_capacity(n);
    let mut cluster = Vec::with_capacity(n);
    let mut representative = Vec::with_capacity(n);
    let mut similar_to = Vec::with_capacity(n);
    let mut resemble = Vec::with_capacity(n);
    let mut contain = Vec::with_capacity(n);
    let mut exact = Vec::with_capacity(n);
    let mut identical_to = Vec::with_capacity(n);
    let mut text_chars = Vec::with_capacity(n);
    let mut replaced = Vec::with_capacity(n);
    let mut unchanged = Vec::with_capacity(n);
    let mut unchanged_html = Vec::with_capacity(n);
    let mut no_main_text = Vec::with_capacity(n);
    let mut candidates = Vec::with_capacity(n);
    let mut verified = Vec::with_capacity(n);
    let mut error: Vec<Option<String>> = Vec::with_capacity(n);
    let mut error_type: Vec<Option<String>> = Vec::with_capacity(n);
    for r in results {
        match r {
            Ok(v) => {
                duplicate.push(Some(v.duplicate));
                doc.push(v.doc);
                cluster.push(v.cluster);
                representative.push(v.representative);
                similar_to.push(v.similar_to);
                resemble.push(Some(v.resemble));
                contain.push(Some(v.contain));
                exact.push(Some(v.exact));
                identical_to.push(v.identical_to);
                text_chars.push(Some(v.text_chars));
                replaced.push(Some(v.replaced));
                unchanged.push(Some(v.unchanged));
                unchanged_html.push(Some(v.unchanged_html));
                no_main_text.push(Some(v.no_main_text));
                candidates.push(Some(v.candidates as u64));
                verified.push(Some(v.verified as u64));
                error.push(None);
                error_type.push(None);
            }
            Err(e) => {
                duplicate.push(None);
                doc.push(None);
                cluster.push(None);
                representative.push(None);
                similar_to.push(None);
                resemble.push(None);
                contain.push(None);
                exact.push(None);
                identical_to.push(None);
                text_chars.push(None);
                replaced.push(None);
                unchanged.push(None);
                unchanged_html.push(None);
                no_main_text.push(None);
                candidates.push(None);
                verified.push(None);
                error.push(Some(e.to_string()));
                // The Python exception's class name (an `error_type` column).
                let class = to_py(py, e)
                    .get_type(py)
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_else(|_| "Error".to_string());
                error_type.push(Some(class));
            }
        }
    }
    let d = PyDict::new(py);
    d.set_item("duplicate", duplicate)?;
    d.set_item("doc", doc)?;
    d.set_item("cluster", cluster)?;
    d.set_item("representative", representative)?;
    d.set_item("similar_to", similar_to)?;
    d.set_item("resemble", resemble)?;
    d.set_item("contain", contain)?;
    d.set_item("exact", exact)?;
    d.set_item("identical_to", identical_to)?;
    d.set_item("text_chars", text_chars)?;
    d.set_item("replaced", replaced)?;
    d.set_item("unchanged", unchanged)?;
    d.set_item("unchanged_html", unchanged_html)?;
    d.set_item("no_main_text", no_main_text)?;
    d.set_item("candidates", candidates)?;
    d.set_item("verified", verified)?;
    d.set_item("error", error)?;
    d.set_item("error_type", error_type)?;
    Ok(d)
}

/// The host of a page given by key alone: the URL's host when the key is a URL, else none.
fn default_host(key: &str) -> String {
    if key.contains("://") {
        neardup::host_of(key).to_string()
    } else {
        String::new()
    }
}

/// The key and host a `query` or `near` probes as (`host` by default the key's, see
/// [`default_host`]), or `None` without a key; a host without a key is refused.
fn probe_target(
    py: Python<'_>,
    call: &str,
    key: Option<String>,
    host: Option<String>,
) -> PyResult<Option<(String, String)>> {
    match (key, host) {
        (None, Some(_)) => Err(invalid_type(
            py,
            format!("{call}(host=...) needs the page's key too"),
        )),
        (None, None) => Ok(None),
        (Some(key), host) => {
            let host = host.unwrap_or_else(|| default_host(&key));
            Ok(Some((key, host)))
        }
    }
}

/// The page a `query` or `near` with a key probes (no publish time).
fn probe_page<'a>(body: &'a Body, key: &'a str, host: &'a str) -> Page<'a> {
    Page {
        key,
        host,
        time: 0,
        content: body.content(),
    }
}

/// The options of ``neardup.Index(path, **options)`` (and ``neardup.Partition``): ``None``
/// when none are given. ``method="shingle"`` stands for ``signature={"method": ...}``, as the
/// CLI's ``--method``.
pub(crate) fn index_options(
    py: Python<'_>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Option<IndexOptions>> {
    let Some(given) = options.filter(|o| !o.is_empty()) else {
        return Ok(None);
    };
    let o = given.copy()?;
    if let Some(m) = o.get_item("method")? {
        o.del_item("method")?;
        let sig = match o.get_item("signature")? {
            Some(s) => s.cast::<PyDict>()?.copy()?,
            None => PyDict::new(py),
        };
        sig.set_item("method", m)?;
        o.set_item("signature", sig)?;
    }
    Ok(Some(options::from_kwargs(py, Some(&o))?))
}

/// A doc partition's rows (either id width) as ``partition_rows`` returns them: ``(pages,
/// clusters)``, dicts of lists.
pub(crate) fn rows_tuple<'py, I: neardup::merge::IdWidth>(
    py: Python<'py>,
    rows: neardup::merge::PartitionRows<I>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (pages, clusters) = rows;
    let p = PyDict::new(py);
    p.set_item(
        "doc",
        pages.iter().map(|r| r.doc.to_u64()).collect::<Vec<_>>(),
    )?;
    p.set_item(
        "key",
        pages.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(),
    )?;
    p.set_item(
        "cluster",
        pages.iter().map(|r| r.cluster.to_u64()).collect::<Vec<_>>(),
    )?;
    p.set_item("seq", pages.iter().map(|r| r.seq).collect::<Vec<_>>())?;
    p.set_item(
        "similar_to",
        pages
            .iter()
            .map(|r| r.similar_to.map(|s| s.0.to_u64()))
            .collect::<Vec<_>>(),
    )?;
    p.set_item(
        "similar_seq",
        pages
            .iter()
            .map(|r| r.similar_to.map(|s| s.1))
            .collect::<Vec<_>>(),
    )?;
    let c = PyDict::new(py);
    c.set_item(
        "cluster",
        clusters.iter().map(|r| r.0.to_u64()).collect::<Vec<_>>(),
    )?;
    c.set_item(
        "representative",
        clusters.iter().map(|r| r.1.to_u64()).collect::<Vec<_>>(),
    )?;
    PyTuple::new(py, [p.into_any(), c.into_any()])
}

#[pymethods]
impl PyIndex {
    #[new]
    #[pyo3(signature = (path, /, *, read_only=false, **options))]
    fn new(
        py: Python<'_>,
        #[pyo3(from_py_with = args::path)] path: PathBuf,
        #[pyo3(from_py_with = args::read_only)] read_only: bool,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let opts = index_options(py, options)?;
        let given = opts.is_some();
        if read_only && given {
            return Err(invalid(
                py,
                "a read-only index is opened with its stored configuration: give no options",
            ));
        }
        let p = path.clone();
        let ix = py
            .detach(move || {
                if read_only {
                    Index::open_read_only(&p)
                } else if let Some(opts) = opts {
                    Index::open(&p, opts)
                } else if p.join("CURRENT").exists() {
                    Index::open_existing(&p)
                } else {
                    Index::open(&p, IndexOptions::default())
                }
            })
            .py(py)?;
        Ok(PyIndex {
            inner: RwLock::new(Some(Arc::new(ix))),
            path,
        })
    }

    /// Inserts a page: compares it with the pages held, stores it, and joins it to the best
    /// verified cluster or founds one, in one atomic write. A key already present is replaced.
    /// ``host`` defaults to the key's host when the key is a URL. Returns a ``Verdict``.
    #[pyo3(signature = (key, html=None, text=None, *, host=None, time=0))]
    fn insert(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::key)] key: String,
        html: Option<&Bound<'_, PyAny>>,
        text: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::host)] host: Option<String>,
        #[pyo3(from_py_with = args::time)] time: i64,
    ) -> PyResult<Verdict> {
        let ix = self.ix(py)?;
        let body = Body::from_args(py, html, text)?;
        let host = host.unwrap_or_else(|| default_host(&key));
        let v = py
            .detach(|| {
                ix.insert(&Page {
                    key: &key,
                    host: &host,
                    time,
                    content: body.content(),
                })
            })
            .py(py)?;
        Ok(v.into())
    }

    /// The verdict ``insert`` would give, without storing anything. With a ``key`` (and
    /// ``host``, by default the key's host when it is a URL), the site chrome learned for the host
    /// is dropped as an insert would, and the page's own stored version is told apart.
    #[pyo3(signature = (html=None, text=None, *, key=None, host=None))]
    fn query(
        &self,
        py: Python<'_>,
        html: Option<&Bound<'_, PyAny>>,
        text: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::opt_key)] key: Option<String>,
        #[pyo3(from_py_with = args::host)] host: Option<String>,
    ) -> PyResult<Verdict> {
        let ix = self.ix(py)?;
        let body = Body::from_args(py, html, text)?;
        let target = probe_target(py, "query", key, host)?;
        let v = py
            .detach(|| match &target {
                Some((key, host)) => ix.query_page(&probe_page(&body, key, host)),
                None => ix.query(body.content()),
            })
            .py(py)?;
        Ok(v.into())
    }

    /// Every stored page this one verifies similar to, best first (identical texts, then by
    /// ``by``: ``"resemble"``, the default, or ``"contain"``; then the other score), at most
    /// ``k`` (``None``: all found), each with its score ``by`` at least ``threshold``
    /// (inclusive; ``None``: every page that verifies): a list of ``NearDuplicate``. Nothing is
    /// stored. The pages compared are those a ``query`` reads — the representatives of the
    /// ranked candidate clusters (at most ``max_clusters_verified``) and each one's
    /// best-sharing member — all verified, with no early stop; ``query``'s ``similar_to`` is
    /// one of them. ``key`` and ``host`` as for ``query``.
    #[pyo3(signature = (html=None, text=None, *, key=None, host=None, k=Some(10), threshold=None, by="resemble".to_string()))]
    #[allow(clippy::too_many_arguments)]
    fn near(
        &self,
        py: Python<'_>,
        html: Option<&Bound<'_, PyAny>>,
        text: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::opt_key)] key: Option<String>,
        #[pyo3(from_py_with = args::host)] host: Option<String>,
        #[pyo3(from_py_with = args::k)] k: Option<usize>,
        #[pyo3(from_py_with = args::threshold)] threshold: Option<f64>,
        #[pyo3(from_py_with = args::by)] by: String,
    ) -> PyResult<Vec<NearDuplicate>> {
        let ix = self.ix(py)?;
        let by = Score::from_name(&by).ok_or_else(|| {
            invalid(
                py,
                format!("by must be \"resemble\" or \"contain\", not {by:?}"),
            )
        })?;
        let opts = NearOptions {
            k: k.unwrap_or(usize::MAX),
            threshold: threshold.unwrap_or(0.0),
            by,
        };
        let body = Body::from_args(py, html, text)?;
        let target = probe_target(py, "near", key, host)?;
        let found = py
            .detach(|| match &target {
                Some((key, host)) => ix.near_page(&probe_page(&body, key, host), &opts),
                None => ix.near(body.content(), &opts),
            })
            .py(py)?;
        Ok(found.into_iter().map(Into::into).collect())
    }

    /// Deletes a page; a deleted representative hands its cluster over. Returns a
    /// ``Deletion``. Raises ``NotFoundError`` (a ``KeyError``) when the key is absent.
    fn delete(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::key)] key: String,
    ) -> PyResult<Deletion> {
        let ix = self.ix(py)?;
        Ok(py.detach(|| ix.delete(&key)).py(py)?.into())
    }

    /// The stored page of a key as a ``PageInfo`` (doc, cluster, representative, similar_to,
    /// ...), or ``default`` (None) when the key is absent.
    #[pyo3(signature = (key, default=None))]
    fn get(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::key)] key: String,
        #[pyo3(from_py_with = args::default)] default: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let ix = self.ix(py)?;
        match py.detach(|| ix.get(&key)).py(py)? {
            Some(r) => Ok(PageInfo::from(r).into_pyobject(py)?.into_any().unbind()),
            None => Ok(default.unwrap_or_else(|| py.None())),
        }
    }

    /// ``ix[key]``: the stored page of a key as a ``PageInfo``; ``NotFoundError`` (a
    /// ``KeyError``) when the key is absent.
    fn __getitem__(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::key)] key: String,
    ) -> PyResult<PageInfo> {
        let ix = self.ix(py)?;
        match py.detach(|| ix.get(&key)).py(py)? {
            Some(r) => Ok(r.into()),
            None => Err(to_py(py, neardup::Error::NotFound(key))),
        }
    }

    /// ``del ix[key]``: deletes the page (as ``delete``); ``NotFoundError`` (a ``KeyError``)
    /// when the key is absent.
    fn __delitem__(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::key)] key: String,
    ) -> PyResult<()> {
        let ix = self.ix(py)?;
        py.detach(|| ix.delete(&key)).py(py)?;
        Ok(())
    }

    /// At most ``chunk`` keys of the pages of id ``first`` and above, in id order, read at one
    /// snapshot, and the id to read the next chunk from (``None`` after the last page): what
    /// ``neardup.Index``'s iteration streams through.
    fn _keys_chunk(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::first)] first: u32,
        #[pyo3(from_py_with = args::chunk)] chunk: usize,
    ) -> PyResult<(Vec<String>, Option<u32>)> {
        let ix = self.ix(py)?;
        py.detach(|| -> neardup::Result<(Vec<String>, Option<u32>)> {
            let mut cur = ix.keys_from(first)?;
            let keys = cur
                .by_ref()
                .take(chunk.max(1))
                .map(|r| r.map(|(k, _)| k))
                .collect::<neardup::Result<Vec<String>>>()?;
            let next = if keys.len() < chunk.max(1) {
                None
            } else {
                cur.last_doc().and_then(|d| d.checked_add(1))
            };
            Ok((keys, next))
        })
        .py(py)
    }

    /// At most ``chunk`` changes of the feed after change ``since``, read at one snapshot, and
    /// the last change committed at that snapshot: what ``neardup.Index.changes_since``
    /// streams through.
    fn _changes_chunk(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::since)] since: u64,
        #[pyo3(from_py_with = args::chunk)] chunk: usize,
    ) -> PyResult<(Vec<Change>, u64)> {
        let ix = self.ix(py)?;
        let (changes, last) = py
            .detach(|| -> neardup::Result<(Vec<neardup::Change>, u64)> {
                let mut cur = ix.changes_since(since)?;
                let changes = cur
                    .by_ref()
                    .take(chunk.max(1))
                    .collect::<neardup::Result<Vec<neardup::Change>>>()?;
                Ok((changes, cur.last_change()))
            })
            .py(py)?;
        Ok((changes.into_iter().map(Change::from).collect(), last))
    }

    /// The sequence number of the last committed change (0 when there is none): what a copy
    /// of the index made now (a checkpoint) follows it from.
    fn last_change(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.ix(py)?.last_change())
    }

    /// Applies a change of another index's feed (a ``Change``, or its ``bytes``) to this index,
    /// a copy of that one, in one atomic write: decided again from what the change kept, with
    /// the ids the original gave out. Applied in sequence order to a copy that started empty
    /// with the original (or from a checkpoint of it and its ``last_change()``) under the same
    /// options, the copy holds what the original holds, and its feed is the original's (each
    /// change recorded as it is, under its number: its ``last_change()`` is where it follows
    /// from). ``InvalidArgumentError`` when the change is not this copy's next one, or does not
    /// apply as it did there (nothing is written).
    fn apply_change(&self, py: Python<'_>, change: &Bound<'_, PyAny>) -> PyResult<()> {
        let change: neardup::Change = if let Ok(c) = change.cast::<Change>() {
            c.get().inner.clone()
        } else if let Ok(b) = change.extract::<Vec<u8>>() {
            neardup::Change::from_bytes(&b).py(py)?
        } else {
            return Err(invalid_type(
                py,
                format!(
                    "change must be a neardup.Change or bytes, not {}",
                    change.get_type().name()?
                ),
            ));
        };
        let ix = self.ix(py)?;
        py.detach(|| ix.apply_change(&change)).py(py)
    }

    /// ``_keys_chunk`` for the pages' records (``PageInfo``).
    fn _pages_chunk(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::first)] first: u32,
        #[pyo3(from_py_with = args::chunk)] chunk: usize,
    ) -> PyResult<(Vec<PageInfo>, Option<u32>)> {
        let ix = self.ix(py)?;
        let (records, next) = py
            .detach(|| -> neardup::Result<(Vec<neardup::Record>, Option<u32>)> {
                let records = ix
                    .pages_from(first)?
                    .take(chunk.max(1))
                    .collect::<neardup::Result<Vec<neardup::Record>>>()?;
                let next = if records.len() < chunk.max(1) {
                    None
                } else {
                    records.last().and_then(|r| r.doc.checked_add(1))
                };
                Ok((records, next))
            })
            .py(py)?;
        Ok((records.into_iter().map(Into::into).collect(), next))
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.ix(py)?.len() as usize)
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(key) = key.cast::<PyString>() else {
            return Ok(false);
        };
        let key = key.to_cow()?.into_owned();
        let ix = self.ix(py)?;
        Ok(py.detach(|| ix.id_of(&key)).py(py)?.is_some())
    }

    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err(NOT_PICKLABLE))
    }

    /// The keys of a cluster's members in id order, ``limit`` of them from ``offset``; None
    /// when there is no such cluster.
    #[pyo3(signature = (cluster, offset=0, limit=None))]
    fn cluster_members(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::cluster)] cluster: u32,
        #[pyo3(from_py_with = args::offset)] offset: usize,
        #[pyo3(from_py_with = args::limit)] limit: Option<usize>,
    ) -> PyResult<Option<Vec<String>>> {
        let ix = self.ix(py)?;
        py.detach(|| ix.cluster_members(cluster, offset, limit.unwrap_or(usize::MAX)))
            .py(py)
    }

    /// Figures about the index as a dict (pages, clusters, bytes per column family, cluster
    /// sizes...), as ``neardup stats`` prints them.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ix = self.ix(py)?;
        let st = py.detach(|| ix.stats()).py(py)?;
        options::to_python(py, &st)
    }

    /// Checks every invariant of the index; returns a dict (pages, clusters, postings,
    /// problem_count, problems, sampled). With ``sample=N``, checks N random pages one by one
    /// instead of the whole index: a quick look at a large one.
    #[pyo3(signature = (sample=None))]
    fn check<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::sample)] sample: Option<u64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ix = self.ix(py)?;
        let rep = py
            .detach(|| match sample {
                Some(n) => ix.check_sample(n),
                None => ix.check(),
            })
            .py(py)?;
        options::to_python(py, &rep)
    }

    /// The memory the index holds, in bytes, by part (block cache, memtables, table readers,
    /// the index's own sets): a dict.
    fn memory<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ix = self.ix(py)?;
        let m: std::collections::BTreeMap<String, u64> =
            py.detach(|| ix.memory()).py(py)?.into_iter().collect();
        options::to_python(py, &m)
    }

    /// Metrics since the index was opened, as a dict: per operation (``insert``, ``batch`` —
    /// ``insert_many`` and sessions —, ``query``, ``near``, ``delete``) the calls that succeeded
    /// (``count``), those that failed (``errors``) and their latencies in microseconds
    /// (``latency``: ``count``, ``mean_us``, ``p50_us``, ``p90_us``, ``p99_us``, ``max_us``);
    /// what inserted pages turned out to be (``unchanged``, ``replaced``, ``duplicates``; a
    /// batch's ``pages`` and ``page_errors``); ``rocksdb`` (write stalls, compaction debt) and
    /// ``memory`` by part as ``[name, value]`` pairs; ``uptime_secs``.
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ix = self.ix(py)?;
        let m = py.detach(|| ix.metrics()).py(py)?;
        options::to_python(py, &m)
    }

    /// RocksDB's own statistics (compactions, levels, write stalls, block cache), as text.
    fn rocksdb_stats(&self, py: Python<'_>) -> PyResult<String> {
        let ix = self.ix(py)?;
        py.detach(|| ix.rocksdb_stats()).py(py)
    }

    /// Flushes memtables to disk (writes are already durable through the write-ahead log).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let ix = self.ix(py)?;
        py.detach(|| ix.flush()).py(py)
    }

    /// Writes a consistent snapshot of the index to ``dir``, which must not exist.
    fn checkpoint(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::dir)] dir: PathBuf,
    ) -> PyResult<()> {
        let ix = self.ix(py)?;
        py.detach(|| ix.checkpoint(&dir)).py(py)
    }

    /// The batch log (bytes, ``neardup.index::encode_log``) that seeds an empty scratch index
    /// with these pages and clusters of this index, deciding nothing (SCALEOUT §5 S4.2): apply
    /// it with ``apply_log`` to a scratch index opened with the same options.
    fn seed_log<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::pages)] pages: Vec<u32>,
        #[pyo3(from_py_with = args::clusters)] clusters: Vec<u32>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ix = self.ix(py)?;
        let bytes = py
            .detach(|| {
                ix.seed_log(&pages, &clusters)
                    .map(|log| neardup::merge::encode_log(&log))
            })
            .py(py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// ``seed_log`` written to the new file ``path`` as it is read, never whole in memory (its
    /// postings sorted in runs beside ``path``): the same bytes. Returns the file's size; on an
    /// error no file is left.
    fn seed_log_file(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::pages)] pages: Vec<u32>,
        #[pyo3(from_py_with = args::clusters)] clusters: Vec<u32>,
        #[pyo3(from_py_with = args::path)] path: std::path::PathBuf,
    ) -> PyResult<u64> {
        let ix = self.ix(py)?;
        py.detach(|| ix.seed_log_file(&pages, &clusters, &path))
            .py(py)
    }

    /// The page and cluster ids of this index that deciding a day reads (SCALEOUT §5 S0–S3 on
    /// one machine): what ``seed_log`` must seed. ``bodies`` are the day's pages (HTML when
    /// ``is_html``, else text; a page that cannot be read is left out), ``keys`` their keys (a
    /// key the index holds is a re-crawl), ``gone`` the keys the day deletes. Two lists.
    #[pyo3(signature = (bodies, keys, gone, is_html=true))]
    fn decision_reach<'py>(
        &self,
        py: Python<'py>,
        bodies: &Bound<'py, PyList>,
        #[pyo3(from_py_with = args::keys)] keys: Vec<String>,
        #[pyo3(from_py_with = args::gone)] gone: Vec<String>,
        #[pyo3(from_py_with = args::is_html)] is_html: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        use rayon::prelude::*;
        let ix = self.ix(py)?;
        let owned = Body::of_list(bodies, is_html)?;
        let reach = py
            .detach(|| -> neardup::Result<neardup::merge::Reach> {
                let cfg = &ix.options().signature;
                let probes: Vec<neardup::Signatures> = owned
                    .par_iter()
                    .filter_map(|b| neardup::Signatures::compute(b.content(), cfg).ok())
                    .collect();
                let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
                let gone: Vec<&str> = gone.iter().map(String::as_str).collect();
                ix.decision_reach(&probes, &keys, &gone)
            })
            .py(py)?;
        PyTuple::new(py, [reach.pages, reach.clusters])
    }

    /// The whole state of the index as a batch log (bytes): what ``state_diff`` compares.
    fn state_log<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let ix = self.ix(py)?;
        let bytes = py
            .detach(|| ix.state_log().map(|log| neardup::merge::encode_log(&log)))
            .py(py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The batch log ``neardup.state_diff(before, index.state_log(), live_docs, live_clusters)``
    /// gives, written to the file ``path`` as it is read from the index one operation at a
    /// time, never held in memory (a work unit's log of a large day, issue #34; the unit holds
    /// ``before``, the state it was seeded with): returns the log's size in bytes. With
    /// ``ids`` (the ``ScratchIds`` of a seed from ``scratch_seed``), each operation is written
    /// in the standing index's ids.
    #[pyo3(signature = (before, live_docs, live_clusters, path, ids=None))]
    fn state_diff_file(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::before)] before: Vec<u8>,
        #[pyo3(from_py_with = args::live_docs)] live_docs: u64,
        #[pyo3(from_py_with = args::live_clusters)] live_clusters: u64,
        #[pyo3(from_py_with = args::path)] path: std::path::PathBuf,
        ids: Option<Py<crate::partition::PyScratchIds>>,
    ) -> PyResult<u64> {
        let ix = self.ix(py)?;
        // Frozen: borrowed without the GIL, never copied (a large unit's ids are megabytes).
        let ids = ids.as_ref().map(|i| &i.get().inner);
        py.detach(|| {
            let before = neardup::merge::decode_log(&before)?;
            match ids {
                Some(ids) => {
                    ix.state_diff_file_mapped(&before, live_docs, live_clusters, &path, ids)
                }
                None => ix.state_diff_file(&before, live_docs, live_clusters, &path),
            }
        })
        .py(py)
    }

    /// The state log written to the file ``path`` in the order a diff reads it (every
    /// non-posting operation, the counters, the postings), never held in memory: what a work
    /// unit keeps of the state it was seeded with (``state_diff_file_since``). Returns the
    /// file's size in bytes.
    fn state_file(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::path)] path: std::path::PathBuf,
    ) -> PyResult<u64> {
        let ix = self.ix(py)?;
        py.detach(|| ix.state_file(&path)).py(py)
    }

    /// ``state_diff_file`` of the state ``state_file`` wrote to the file ``before``, read from
    /// it as the diff goes: the same log, byte for byte, without the state in memory.
    #[pyo3(signature = (before, live_docs, live_clusters, path, ids=None))]
    fn state_diff_file_since(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::before_file)] before: std::path::PathBuf,
        #[pyo3(from_py_with = args::live_docs)] live_docs: u64,
        #[pyo3(from_py_with = args::live_clusters)] live_clusters: u64,
        #[pyo3(from_py_with = args::path)] path: std::path::PathBuf,
        ids: Option<Py<crate::partition::PyScratchIds>>,
    ) -> PyResult<u64> {
        let ix = self.ix(py)?;
        let ids = ids.as_ref().map(|i| &i.get().inner);
        py.detach(|| ix.state_diff_file_since(&before, live_docs, live_clusters, &path, ids))
            .py(py)
    }

    /// Applies batch ``batch``'s log (bytes) once in effect (SCALEOUT §9): ``True`` when
    /// written, ``False`` when this batch was applied already. A batch other than the last
    /// applied or the next raises ``InvalidArgumentError``; after a crash part way, applying the
    /// same log again gives the state one whole application gives.
    fn apply_log(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::batch)] batch: u64,
        log: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let ix = self.ix(py)?;
        // Decoded a chunk at a time: a partition's log of a large day is never held decoded.
        let log = args::borrowed(log, "log")?;
        let outcome = py.detach(|| ix.apply_log_bytes(batch, log)).py(py)?;
        Ok(matches!(
            outcome,
            neardup::merge::ApplyOutcome::Applied { .. }
        ))
    }

    /// ``apply_log`` of the log in the file ``path``, read an operation at a time, never whole
    /// (a partition's share of a large day, issue #34): the same checks before anything is
    /// written, the same result. ``OSError`` when the file cannot be read.
    fn apply_log_file(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::batch)] batch: u64,
        #[pyo3(from_py_with = args::path)] path: std::path::PathBuf,
    ) -> PyResult<bool> {
        let ix = self.ix(py)?;
        let outcome = py.detach(|| ix.apply_log_file(batch, &path)).py(py)?;
        Ok(matches!(
            outcome,
            neardup::merge::ApplyOutcome::Applied { .. }
        ))
    }

    /// The last batch log applied, ``None`` when none has been.
    fn applied_batch(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        let ix = self.ix(py)?;
        py.detach(|| ix.applied_batch()).py(py)
    }

    /// Makes this empty index partition ``part`` of kind ``role`` (``"key"`` or ``"doc"``) of
    /// ``layout``: from then on it takes batch logs only (``apply_log`` refuses another
    /// partition's operations; ``insert`` and ``delete`` raise ``InvalidArgumentError``).
    /// Recording the same partition again does nothing.
    fn set_partition(
        &self,
        py: Python<'_>,
        layout: &crate::partition::PyLayout,
        #[pyo3(from_py_with = args::role)] role: String,
        #[pyo3(from_py_with = args::part)] part: u32,
    ) -> PyResult<()> {
        let ix = self.ix(py)?;
        let role = crate::wide::role_of(py, &role, part)?;
        let p = neardup::merge::Partition::new(layout.inner, role).py(py)?;
        py.detach(|| ix.set_partition(p)).py(py)
    }

    /// This database's place in a distributed index: ``(role, part, key_parts, doc_parts)``,
    /// or ``None`` for a whole index.
    #[getter]
    fn partition(&self, py: Python<'_>) -> PyResult<Option<(&'static str, u32, u32, u32)>> {
        let ix = self.ix(py)?;
        Ok(ix.partition().py(py)?.map(crate::wide::place_of))
    }

    /// The page ids filed under any of the 9-byte posting keys of ``packed`` (their
    /// concatenation), over-frequent keys left out: a key partition's answer to the day's
    /// probes. Sorted.
    fn posting_reach(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::packed)] packed: Vec<u8>,
    ) -> PyResult<Vec<u32>> {
        let ix = self.ix(py)?;
        let keys = crate::partition::unpack_keys(py, &packed)?;
        py.detach(|| ix.posting_reach(&keys).map(|b| b.iter().collect()))
            .py(py)
    }

    /// The page ids within the simhash distance of any of ``simhashes`` among the simhash
    /// entries this database holds. Sorted.
    fn simhash_reach(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::simhashes)] simhashes: Vec<u64>,
    ) -> PyResult<Vec<u32>> {
        let ix = self.ix(py)?;
        py.detach(|| ix.simhash_reach(&simhashes).map(|b| b.iter().collect()))
            .py(py)
    }

    /// The page ids filed under each 9-byte posting key of ``packed`` (their concatenation),
    /// none for an over-frequent key: one list per key.
    fn posting_ids(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::packed)] packed: Vec<u8>,
    ) -> PyResult<Vec<Vec<u32>>> {
        let ix = self.ix(py)?;
        let keys = crate::partition::unpack_keys(py, &packed)?;
        py.detach(|| {
            ix.posting_ids(&keys)
                .map(|v| v.into_iter().map(|b| b.iter().collect()).collect())
        })
        .py(py)
    }

    /// A key partition's share of S3 (``Index.probe_forest`` in Rust): the probes of ``join``
    /// (a ``neardup.ProbeJoin``, emptied) joined through this partition's postings and
    /// simhash tables, a standing page ``d`` being node ``doc_tag | d``. Returns ``(nodes,
    /// roots, counts)``: ``uint64`` bytes for ``neardup.Components.merge_forest``, and the
    /// distinct ``keys`` and ``simhashes`` looked up and the ``standing`` pages found.
    fn probe_forest<'py>(
        &self,
        py: Python<'py>,
        mut join: PyRefMut<'py, crate::components::PyProbeJoin>,
        doc_tag: u64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let ix = self.ix(py)?;
        let join = std::mem::take(&mut join.inner);
        let f = py.detach(|| ix.probe_forest(join, doc_tag)).py(py)?;
        crate::components::forest_tuple(py, f)
    }

    /// A key partition's keys for the third round of a component over the cap (``Index.key_stars``
    /// in Rust): for each key of ``stars`` (a ``neardup.KeyStars``, emptied), an edge from its
    /// lowest owner to each other owner and standing page filed under it, standing page ``d``
    /// as node ``doc_tag | d``. Returns ``(a, b, weights, keys)``: ``uint64`` bytes, each edge's
    /// key's owners as ``uint32`` bytes, and the distinct keys looked up.
    fn key_stars<'py>(
        &self,
        py: Python<'py>,
        mut stars: PyRefMut<'py, crate::components::PyKeyStars>,
        doc_tag: u64,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let ix = self.ix(py)?;
        let stars = std::mem::take(&mut stars.inner);
        let e = py.detach(|| ix.key_stars(stars, doc_tag)).py(py)?;
        crate::components::stars_tuple(py, e)
    }

    /// Of each simhash, the page ids within the simhash distance of it among the entries this
    /// database holds: one list per simhash.
    fn simhash_ids(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::simhashes)] simhashes: Vec<u64>,
    ) -> PyResult<Vec<Vec<u32>>> {
        let ix = self.ix(py)?;
        py.detach(|| {
            ix.simhash_ids(&simhashes)
                .map(|v| v.into_iter().map(|b| b.iter().collect()).collect())
        })
        .py(py)
    }

    /// Starts (``True``) or stops recording the ids committed writes give out; stopping drops
    /// what was recorded.
    fn record_allocations(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::on)] on: bool,
    ) -> PyResult<()> {
        self.ix(py)?.record_allocations(on);
        Ok(())
    }

    /// The ids given out since the last call, in order: ``(key, kind, id, seq)`` tuples, ``key``
    /// the page being inserted then (``None`` during a delete), ``kind`` ``"page"`` (with its
    /// insertion number ``seq``) or ``"cluster"`` (``seq`` ``None``).
    #[allow(clippy::type_complexity)]
    fn take_allocations(
        &self,
        py: Python<'_>,
    ) -> PyResult<Vec<(Option<String>, &'static str, u32, Option<u64>)>> {
        Ok(self
            .ix(py)?
            .take_allocations()
            .into_iter()
            .map(|a| {
                let key = a.key.map(|k| k.to_string());
                match a.id {
                    neardup::merge::AllocatedId::Page { doc, seq } => (key, "page", doc, Some(seq)),
                    neardup::merge::AllocatedId::Cluster(c) => (key, "cluster", c, None),
                }
            })
            .collect())
    }

    /// The page id of each key (``None`` for a key this database does not hold).
    fn key_ids(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::keys)] keys: Vec<String>,
    ) -> PyResult<Vec<Option<u32>>> {
        let ix = self.ix(py)?;
        py.detach(|| {
            let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
            ix.key_ids(&keys)
        })
        .py(py)
    }

    /// The cluster of each page id (``None`` for a page this database does not hold).
    fn page_clusters(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::ids)] ids: Vec<u32>,
    ) -> PyResult<Vec<Option<u32>>> {
        let ix = self.ix(py)?;
        py.detach(|| ix.page_clusters(&ids)).py(py)
    }

    /// The member page ids of each cluster (``None`` for a cluster this database does not
    /// hold).
    fn cluster_member_ids(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::clusters)] clusters: Vec<u32>,
    ) -> PyResult<Vec<Option<Vec<u32>>>> {
        let ix = self.ix(py)?;
        py.detach(|| {
            ix.cluster_member_ids(&clusters).map(|v| {
                v.into_iter()
                    .map(|m| m.map(|b| b.iter().collect()))
                    .collect()
            })
        })
        .py(py)
    }

    /// Of each page id, ``(simhash, posting keys)`` (the 9-byte keys it is filed under,
    /// concatenated), ``None`` for a page this database does not hold.
    fn filed_pages<'py>(
        &self,
        py: Python<'py>,
        #[pyo3(from_py_with = args::ids)] ids: Vec<u32>,
    ) -> PyResult<Vec<Option<FiledPy<'py>>>> {
        let ix = self.ix(py)?;
        let filed = py.detach(|| ix.filed_pages(&ids)).py(py)?;
        Ok(filed
            .into_iter()
            .map(|f| f.map(|(h, keys)| (h, PyBytes::new(py, &keys.concat()))))
            .collect())
    }

    /// The pages and clusters this database holds: ``(pages, clusters)``, ``pages`` a dict of
    /// lists ``doc``, ``key``, ``cluster``, ``seq``, ``similar_to`` and ``similar_seq`` (the
    /// page it was placed against and that page's insertion number, or ``None``); ``clusters`` one of ``cluster``,
    /// ``representative`` (the representative's page id, which another doc partition may
    /// hold).
    fn partition_rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let ix = self.ix(py)?;
        let rows = py.detach(|| ix.partition_rows()).py(py)?;
        rows_tuple(py, rows)
    }

    /// Closes the index (after the calls still running on it return). Later calls raise
    /// ``InvalidArgumentError``; closing twice does nothing.
    fn close(&self, py: Python<'_>) {
        let taken = self.inner.write().take();
        py.detach(move || drop(taken));
    }

    /// True once ``close()`` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.read().is_none()
    }

    /// The directory the index was opened with.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// True when the index was opened read-only.
    #[getter]
    fn read_only(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.ix(py)?.is_read_only())
    }

    /// The options the index was opened with, as a dict (``IndexOptions``' fields).
    #[getter]
    fn options<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let ix = self.ix(py)?;
        options::to_python(py, ix.options())
    }

    /// Inserts a batch through the library's `insert_batch`: columns in, verdict columns out
    /// (see `verdict_columns`). `order` is "fingerprints" or "input", `scope` "window" or
    /// "batch" (`OrderScope`). `progress(done, total)` is called (with the GIL) after every
    /// committed group. The batch must hold each key once. `mains`: each page's main text as
    /// `MainText::encode` gave it (`signatures_table(..., main_text=True)`), or None to extract
    /// it here (`Index::insert_batch_extracted`); a row whose item does not decode is an error
    /// row, not inserted.
    #[pyo3(signature = (keys, hosts, times, bodies, is_html, order, scope="window", window=1024, group=1024, progress=None, mains=None))]
    #[allow(clippy::too_many_arguments)]
    fn _insert_batch<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyList>,
        hosts: &Bound<'py, PyList>,
        times: &Bound<'py, PyList>,
        bodies: &Bound<'py, PyList>,
        is_html: bool,
        order: &str,
        scope: &str,
        window: usize,
        group: usize,
        progress: Option<Py<PyAny>>,
        mains: Option<&Bound<'py, PyList>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let ix = self.ix(py)?;
        let order = match order {
            "fingerprints" => BatchOrder::FingerprintCount,
            "input" => BatchOrder::Input,
            other => {
                return Err(invalid(
                    py,
                    format!("order must be \"fingerprints\" or \"input\", not {other:?}"),
                ))
            }
        };
        let scope = match scope {
            "window" => OrderScope::Window,
            "batch" => OrderScope::Batch,
            other => {
                return Err(invalid(
                    py,
                    format!("order_scope must be \"window\" or \"batch\", not {other:?}"),
                ))
            }
        };
        let owned = owned_pages(keys, hosts, times, bodies, is_html)?;
        let mains = match mains {
            Some(list) if list.len() != owned.len() => {
                return Err(invalid(py, "mains and keys differ in length"))
            }
            Some(list) => Some(decoded_mains(list)?),
            None => None,
        };
        let opts = BatchOptions {
            order,
            scope,
            window: window.max(1),
            group: group.max(1),
        };
        let mut callback_error: Option<PyErr> = None;
        let results = py
            .detach(|| {
                let pages: Vec<Page<'_>> = owned.iter().map(Owned::page).collect();
                let mut tick = |done, total| {
                    if let (Some(cb), None) = (&progress, &callback_error) {
                        Python::attach(|py| {
                            if let Err(e) = cb.call1(py, (done, total)) {
                                callback_error = Some(e);
                            }
                        });
                    }
                };
                let Some(mains) = mains else {
                    return ix.insert_batch(&pages, &opts, &mut tick);
                };
                // The rows whose main text does not decode are error rows; the others go in.
                let mut out: Vec<Option<neardup::Result<neardup::Verdict>>> =
                    (0..pages.len()).map(|_| None).collect();
                let (mut rows, mut kept, mut given) = (Vec::new(), Vec::new(), Vec::new());
                for (i, m) in mains.into_iter().enumerate() {
                    match m {
                        Ok(m) => {
                            rows.push(i);
                            kept.push(pages[i]);
                            given.push(m);
                        }
                        Err(e) => out[i] = Some(Err(e)),
                    }
                }
                let results = ix.insert_batch_extracted(&kept, &given, &opts, &mut tick)?;
                for (i, r) in rows.into_iter().zip(results) {
                    out[i] = Some(r);
                }
                Ok(out.into_iter().flatten().collect())
            })
            .py(py)?;
        let columns = verdict_columns(py, results)?;
        match callback_error {
            Some(e) => Err(e),
            None => Ok(columns),
        }
    }

    /// Queries pages in parallel through the library's `query_pages` (nothing stored): the
    /// chrome learned for each page's host is dropped as `_insert_batch` would drop it. The
    /// columns of `_insert_batch` in, verdict columns out.
    fn _query_pages<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyList>,
        hosts: &Bound<'py, PyList>,
        times: &Bound<'py, PyList>,
        bodies: &Bound<'py, PyList>,
        is_html: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let ix = self.ix(py)?;
        let owned = owned_pages(keys, hosts, times, bodies, is_html)?;
        let results = py
            .detach(|| {
                let pages: Vec<Page<'_>> = owned.iter().map(Owned::page).collect();
                ix.query_pages(&pages)
            })
            .py(py)?;
        verdict_columns(py, results)
    }

    /// Queries a batch in parallel through the library's `query_batch` (nothing stored):
    /// bodies in, verdict columns out.
    fn _query_batch<'py>(
        &self,
        py: Python<'py>,
        bodies: &Bound<'py, PyList>,
        is_html: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let ix = self.ix(py)?;
        let owned = Body::of_list(bodies, is_html)?;
        let results = py
            .detach(|| {
                let contents: Vec<neardup::Content<'_>> =
                    owned.iter().map(|b| b.content()).collect();
                ix.query_batch(&contents)
            })
            .py(py)?;
        verdict_columns(py, results)
    }

    /// Every page's key and the key of the page it was judged a near duplicate of, in id order
    /// (`neardup export`): two lists.
    fn _export<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let ix = self.ix(py)?;
        let (keys, reps) = py
            .detach(|| {
                let mut keys = Vec::new();
                let mut reps = Vec::new();
                ix.export(|k, r| {
                    keys.push(k.to_string());
                    reps.push(r.to_string());
                })
                .map(|()| (keys, reps))
            })
            .py(py)?;
        PyTuple::new(py, [keys, reps])
    }

    /// Every cluster (id, representative, members), in id order (`neardup export --clusters`):
    /// three lists.
    fn _export_clusters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let ix = self.ix(py)?;
        let (ids, reps, members) = py
            .detach(|| {
                let mut ids = Vec::new();
                let mut reps = Vec::new();
                let mut members = Vec::new();
                ix.export_clusters(|c, r, m| {
                    ids.push(c);
                    reps.push(r.to_string());
                    members.push(m.to_vec());
                })
                .map(|()| (ids, reps, members))
            })
            .py(py)?;
        PyTuple::new(
            py,
            [
                ids.into_pyobject(py)?.into_any(),
                reps.into_pyobject(py)?.into_any(),
                members.into_pyobject(py)?.into_any(),
            ],
        )
    }
}
