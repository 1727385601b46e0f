//! The result objects: `Verdict`, `Deletion`, `PageInfo`, `NearDuplicate`, `Signatures`,
//! `Similarity`, `Change`. Plain,
//! immutable values copied out of the library's structs (so they outlive the index).
//!
//! Each compares equal to another of its type with the same fields, hashes by them, and pickles
//! (so that a Ray task or a multiprocessing worker can return it): `__reduce__` gives
//! `neardup._neardup._restore(type name, fields)`, the fields a tuple in declaration order.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::errors::invalid;

/// A value type's fields as a tuple (its pickled state) and back, in declaration order.
macro_rules! state {
    ($t:ident { $($f:ident),* $(,)? }) => {
        impl $t {
            /// The fields, as a tuple.
            pub(crate) fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
                PyTuple::new(py, [$(self.$f.clone().into_bound_py_any(py)?),*])
            }

            /// The value of the fields `state` gave.
            pub(crate) fn from_state(state: &Bound<'_, PyTuple>) -> PyResult<Self> {
                let names: &[&str] = &[$(stringify!($f)),*];
                if state.len() != names.len() {
                    return Err(invalid(
                        state.py(),
                        format!(
                            "{} takes {} fields, not {}",
                            stringify!($t),
                            names.len(),
                            state.len()
                        ),
                    ));
                }
                let mut items = state.iter();
                Ok($t {
                    $($f: match items.next() {
                        Some(v) => v.extract().map_err(Into::<PyErr>::into)?,
                        None => unreachable_field(state.py())?,
                    },)*
                })
            }
        }
    };
}

/// A field missing from a state whose length was checked: never.
fn unreachable_field<T>(py: Python<'_>) -> PyResult<T> {
    Err(invalid(py, "a pickled value is missing a field"))
}

/// What `__reduce__` gives: `(restore function, (type name, state))`.
type Reduced<'py> = (Bound<'py, PyAny>, (String, Bound<'py, PyTuple>));

/// `(neardup._neardup._restore, (type name, state))`: what `pickle` calls to make the value again.
fn reduce<'py>(py: Python<'py>, name: &str, state: Bound<'py, PyTuple>) -> PyResult<Reduced<'py>> {
    let restore = py.import("neardup._neardup")?.getattr("_restore")?;
    Ok((restore, (name.to_string(), state)))
}

/// The hash of a state: lists become tuples.
fn hash_state(state: &Bound<'_, PyTuple>) -> PyResult<isize> {
    fn frozen<'py>(v: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if !(v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>()) {
            return Ok(v);
        }
        let items = v
            .try_iter()?
            .map(|item| frozen(item?))
            .collect::<PyResult<Vec<Bound<'py, PyAny>>>>()?;
        Ok(PyTuple::new(v.py(), items)?.into_any())
    }
    frozen(state.clone().into_any())?.hash()
}

/// A value from its type name and state (`pickle` calls it; see the module docs).
#[pyfunction]
pub(crate) fn _restore<'py>(
    py: Python<'py>,
    name: &str,
    state: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyAny>> {
    match name {
        "Verdict" => Verdict::from_state(state)?.into_bound_py_any(py),
        "Deletion" => Deletion::from_state(state)?.into_bound_py_any(py),
        "PageInfo" => PageInfo::from_state(state)?.into_bound_py_any(py),
        "NearDuplicate" => NearDuplicate::from_state(state)?.into_bound_py_any(py),
        "Signatures" => Signatures::from_state(state)?.into_bound_py_any(py),
        "Similarity" => Similarity::from_state(state)?.into_bound_py_any(py),
        other => Err(invalid(py, format!("no value type is named {other:?}"))),
    }
}

/// The answer for one page (`Index.insert`, `Index.query`): is it a near duplicate, of what,
/// how similar.
#[pyclass(frozen, get_all, eq, module = "neardup._neardup")]
#[derive(Clone, PartialEq)]
pub(crate) struct Verdict {
    /// True when the page was verified similar to a page already held (`similar_to`).
    duplicate: bool,
    /// The page's internal id (None for a query).
    doc: Option<u32>,
    /// The page's insertion number (None for a query).
    seq: Option<u64>,
    /// The cluster the page joined or founded (None for a query that found no duplicate).
    cluster: Option<u32>,
    /// Key of the cluster's representative after the operation.
    representative: Option<String>,
    /// Key of the closest page this one was verified similar to, when a duplicate.
    similar_to: Option<String>,
    /// Resemble rate with `similar_to` (0 when not a duplicate).
    resemble: f64,
    /// Contain rate with `similar_to` (0 when not a duplicate).
    contain: f64,
    /// True when the normalized texts of this page and `similar_to` are identical.
    exact: bool,
    /// Key of a stored page whose main text is identical to this page's, if any.
    identical_to: Option<String>,
    /// Length of the page's normalized main text, in characters.
    text_chars: u32,
    /// True when the key was present and its page was replaced.
    replaced: bool,
    /// What taking the replaced page out changed (None unless `replaced`).
    replaced_page: Option<Deletion>,
    /// True when the key was present with the same main text and host (an unchanged recrawl):
    /// nothing was decided again; the stored record was refreshed in place (page hash, time)
    /// unless `unchanged_html` is true and the time is the same.
    unchanged: bool,
    /// True when `unchanged` and the raw page is byte-identical to the stored one (implies
    /// `unchanged`); false when only the main text is the same.
    unchanged_html: bool,
    /// True when the page has (almost) no main text: stored alone, never compared.
    no_main_text: bool,
    /// How many candidate pages were found.
    candidates: usize,
    /// How many pairs were verified.
    verified: usize,
}

impl From<neardup::Verdict> for Verdict {
    fn from(v: neardup::Verdict) -> Self {
        Verdict {
            duplicate: v.duplicate,
            doc: v.doc,
            seq: v.seq,
            cluster: v.cluster,
            representative: v.representative,
            similar_to: v.similar_to,
            resemble: v.resemble,
            contain: v.contain,
            exact: v.exact,
            identical_to: v.identical_to,
            text_chars: v.text_chars,
            replaced: v.replaced,
            replaced_page: v.replaced_page.map(|d| Deletion::from(*d)),
            unchanged: v.unchanged,
            unchanged_html: v.unchanged_html,
            no_main_text: v.no_main_text,
            candidates: v.candidates,
            verified: v.verified,
        }
    }
}

state!(Verdict {
    duplicate,
    doc,
    seq,
    cluster,
    representative,
    similar_to,
    resemble,
    contain,
    exact,
    identical_to,
    text_chars,
    replaced,
    replaced_page,
    unchanged,
    unchanged_html,
    no_main_text,
    candidates,
    verified
});

#[pymethods]
impl Verdict {
    /// Pickles as `_restore("Verdict", fields)`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        reduce(py, "Verdict", self.state(py)?)
    }

    /// The hash of the fields (equal values hash alike).
    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        hash_state(&self.state(py)?)
    }

    fn __repr__(&self) -> String {
        format!(
            "Verdict(duplicate={}, doc={}, cluster={}, representative={}, similar_to={}, \
             resemble={:.3}, contain={:.3}, exact={}, replaced={}, unchanged={}, \
             unchanged_html={}, no_main_text={}, candidates={}, verified={})",
            py_bool(self.duplicate),
            opt(&self.doc),
            opt(&self.cluster),
            opt_str(&self.representative),
            opt_str(&self.similar_to),
            self.resemble,
            self.contain,
            py_bool(self.exact),
            py_bool(self.replaced),
            py_bool(self.unchanged),
            py_bool(self.unchanged_html),
            py_bool(self.no_main_text),
            self.candidates,
            self.verified
        )
    }
}

/// What a delete changed (`Index.delete`, and `Verdict.replaced_page`).
#[pyclass(frozen, get_all, eq, from_py_object, module = "neardup._neardup")]
#[derive(Clone, PartialEq)]
pub(crate) struct Deletion {
    /// The deleted page's key.
    key: String,
    /// Its internal id (free now).
    doc: u32,
    /// The cluster it was in.
    cluster: u32,
    /// True when it was that cluster's representative.
    was_representative: bool,
    /// The cluster's representative after the delete; None when the cluster is gone.
    representative: Option<String>,
    /// After a representative's delete, the members moved to another cluster:
    /// `(key, cluster, representative)` tuples.
    moved: Vec<(String, u32, String)>,
}

impl From<neardup::Deletion> for Deletion {
    fn from(d: neardup::Deletion) -> Self {
        Deletion {
            key: d.key,
            doc: d.doc,
            cluster: d.cluster,
            was_representative: d.was_representative,
            representative: d.representative,
            moved: d
                .moved
                .into_iter()
                .map(|m| (m.key, m.cluster, m.representative))
                .collect(),
        }
    }
}

state!(Deletion {
    key,
    doc,
    cluster,
    was_representative,
    representative,
    moved
});

#[pymethods]
impl Deletion {
    /// Pickles as `_restore("Deletion", fields)`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        reduce(py, "Deletion", self.state(py)?)
    }

    /// The hash of the fields (equal values hash alike).
    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        hash_state(&self.state(py)?)
    }

    fn __repr__(&self) -> String {
        format!(
            "Deletion(key={:?}, doc={}, cluster={}, was_representative={}, representative={}, moved={})",
            self.key,
            self.doc,
            self.cluster,
            py_bool(self.was_representative),
            opt_str(&self.representative),
            self.moved.len()
        )
    }
}

/// A stored page as the index holds it (`Index.get`).
#[pyclass(frozen, get_all, eq, module = "neardup._neardup")]
#[derive(Clone, PartialEq)]
pub(crate) struct PageInfo {
    /// The page's key.
    key: String,
    /// Its internal id.
    doc: u32,
    /// Its insertion number (unique for the index's life).
    seq: u64,
    /// The cluster it is in.
    cluster: u32,
    /// The key of that cluster's representative (its own key when it leads).
    representative: String,
    /// The page it was judged a near duplicate of when placed, while that page is held.
    similar_to: Option<String>,
    /// Resemble rate with `similar_to` when placed.
    resemble: f64,
    /// Contain rate with `similar_to` when placed.
    contain: f64,
    /// The 128-bit hash of its normalized main text.
    content_hash: u128,
    /// The host it came from (may be empty).
    host: String,
    /// Its publish time in Unix seconds (0: unknown).
    time: i64,
    /// The length of its normalized main text in characters.
    text_chars: u32,
}

impl From<neardup::Record> for PageInfo {
    fn from(r: neardup::Record) -> Self {
        PageInfo {
            key: r.key,
            doc: r.doc,
            seq: r.seq,
            cluster: r.cluster,
            representative: r.representative,
            similar_to: r.similar_to,
            resemble: r.resemble,
            contain: r.contain,
            content_hash: r.content_hash,
            host: r.host,
            time: r.time,
            text_chars: r.text_chars,
        }
    }
}

state!(PageInfo {
    key,
    doc,
    seq,
    cluster,
    representative,
    similar_to,
    resemble,
    contain,
    content_hash,
    host,
    time,
    text_chars
});

#[pymethods]
impl PageInfo {
    /// Pickles as `_restore("PageInfo", fields)`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        reduce(py, "PageInfo", self.state(py)?)
    }

    /// The hash of the fields (equal values hash alike).
    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        hash_state(&self.state(py)?)
    }

    fn __repr__(&self) -> String {
        format!(
            "PageInfo(key={:?}, doc={}, cluster={}, representative={:?}, similar_to={})",
            self.key,
            self.doc,
            self.cluster,
            self.representative,
            opt_str(&self.similar_to)
        )
    }
}

/// A stored page a query verified similar to (`Index.near`).
#[pyclass(frozen, get_all, eq, module = "neardup._neardup")]
#[derive(Clone, PartialEq)]
pub(crate) struct NearDuplicate {
    /// The page's key.
    key: String,
    /// Its internal id.
    doc: u32,
    /// The cluster it is in.
    cluster: u32,
    /// The key of that cluster's representative (its own key when it leads).
    representative: String,
    /// Resemble rate of the query with this page (1 when `exact`).
    resemble: f64,
    /// Contain rate of the query with this page (1 when `exact`).
    contain: f64,
    /// True when the normalized texts are identical.
    exact: bool,
}

impl From<neardup::NearDuplicate> for NearDuplicate {
    fn from(n: neardup::NearDuplicate) -> Self {
        NearDuplicate {
            key: n.key,
            doc: n.doc,
            cluster: n.cluster,
            representative: n.representative,
            resemble: n.resemble,
            contain: n.contain,
            exact: n.exact,
        }
    }
}

state!(NearDuplicate {
    key,
    doc,
    cluster,
    representative,
    resemble,
    contain,
    exact
});

#[pymethods]
impl NearDuplicate {
    /// Pickles as `_restore("NearDuplicate", fields)`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        reduce(py, "NearDuplicate", self.state(py)?)
    }

    /// The hash of the fields (equal values hash alike).
    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        hash_state(&self.state(py)?)
    }

    fn __repr__(&self) -> String {
        format!(
            "NearDuplicate(key={:?}, doc={}, cluster={}, representative={:?}, resemble={:.3}, \
             contain={:.3}, exact={})",
            self.key,
            self.doc,
            self.cluster,
            self.representative,
            self.resemble,
            self.contain,
            py_bool(self.exact)
        )
    }
}

/// Everything computed from one page (`neardup.signatures`).
#[pyclass(frozen, get_all, eq, module = "neardup._neardup")]
#[derive(Clone, PartialEq)]
pub(crate) struct Signatures {
    /// The normalized main text (what fingerprints and verification work on).
    text: String,
    /// Sentence fingerprints (128-bit ints), sorted and distinct.
    fingerprints: Vec<u128>,
    /// Clause keys (bottom-k sketch and local keys; 128-bit ints), sorted and distinct.
    sketch: Vec<u128>,
    /// 64-bit simhash of the normalized text.
    simhash: u64,
    /// 128-bit hash of the normalized text.
    content_hash: u128,
    /// Hashes of the model-code-like tokens of the page's heading.
    codes: Vec<u32>,
}

impl From<neardup::Signatures> for Signatures {
    fn from(s: neardup::Signatures) -> Self {
        Signatures {
            text: s.text,
            fingerprints: s.fingerprints,
            sketch: s.sketch,
            simhash: s.simhash,
            content_hash: s.content_hash,
            codes: s.codes,
        }
    }
}

state!(Signatures {
    text,
    fingerprints,
    sketch,
    simhash,
    content_hash,
    codes
});

#[pymethods]
impl Signatures {
    /// Pickles as `_restore("Signatures", fields)`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        reduce(py, "Signatures", self.state(py)?)
    }

    /// The hash of the fields (equal values hash alike).
    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        hash_state(&self.state(py)?)
    }

    fn __repr__(&self) -> String {
        format!(
            "Signatures(text_chars={}, fingerprints={}, sketch={}, simhash=0x{:016x}, content_hash=0x{:032x})",
            self.text.chars().count(),
            self.fingerprints.len(),
            self.sketch.len(),
            self.simhash,
            self.content_hash
        )
    }
}

/// The outcome of `neardup.verify` for one pair of texts.
#[pyclass(frozen, get_all, eq, module = "neardup._neardup")]
#[derive(Clone, PartialEq)]
pub(crate) struct Similarity {
    /// `resemble >= resemble_threshold or contain >= contain_threshold`.
    similar: bool,
    /// Resemble rate `tlcs / (len_a + len_b - tlcs)`, in [0, 1].
    resemble: f64,
    /// Contain rate `tlcs / min(len_a, len_b)`, in [0, 1].
    contain: f64,
    /// Length of the first text in units (CJK characters, words, punctuation marks).
    len_a: usize,
    /// Length of the second text in units.
    len_b: usize,
    /// Length of the trustable LCS in units.
    tlcs: usize,
}

impl From<neardup::Similarity> for Similarity {
    fn from(s: neardup::Similarity) -> Self {
        Similarity {
            similar: s.similar,
            resemble: s.resemble,
            contain: s.contain,
            len_a: s.len_a,
            len_b: s.len_b,
            tlcs: s.tlcs,
        }
    }
}

state!(Similarity {
    similar,
    resemble,
    contain,
    len_a,
    len_b,
    tlcs
});

#[pymethods]
impl Similarity {
    /// Pickles as `_restore("Similarity", fields)`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Reduced<'py>> {
        reduce(py, "Similarity", self.state(py)?)
    }

    /// The hash of the fields (equal values hash alike).
    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        hash_state(&self.state(py)?)
    }

    fn __repr__(&self) -> String {
        format!(
            "Similarity(similar={}, resemble={:.3}, contain={:.3}, len_a={}, len_b={}, tlcs={})",
            py_bool(self.similar),
            self.resemble,
            self.contain,
            self.len_a,
            self.len_b,
            self.tlcs
        )
    }
}

fn py_bool(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map_or("None".to_string(), |v| v.to_string())
}

fn opt_str(v: &Option<String>) -> String {
    v.as_ref().map_or("None".to_string(), |v| format!("{v:?}"))
}

/// One committed change of an index's feed (`Index.changes_since`). Its fields are those of
/// its kind (`None` for the others); ``bytes(change)`` is the whole change, what
/// ``Index.apply_change`` takes on a copy of the index (in this or another process), and
/// ``Change.from_bytes`` reads back. Pickles, compares and hashes by those bytes.
#[pyclass(frozen, module = "neardup._neardup")]
#[derive(Clone)]
pub(crate) struct Change {
    pub(crate) inner: neardup::Change,
    bytes: Vec<u8>,
}

impl From<neardup::Change> for Change {
    fn from(inner: neardup::Change) -> Self {
        let bytes = inner.to_bytes();
        Change { inner, bytes }
    }
}

impl Change {
    /// The page of an insert or a replace.
    fn page(&self) -> Option<&neardup::PageChange> {
        match &self.inner.kind {
            neardup::ChangeKind::Inserted(p) | neardup::ChangeKind::Replaced(p) => Some(p),
            _ => None,
        }
    }
}

#[pymethods]
impl Change {
    /// The change from ``bytes(change)``.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        neardup::Change::from_bytes(data)
            .map(Change::from)
            .map_err(|e| crate::errors::to_py(py, e))
    }

    /// Its sequence number: from 1, strictly increasing over the index's life.
    #[getter]
    fn seq(&self) -> u64 {
        self.inner.seq
    }

    /// When it was committed, Unix milliseconds (the writer's clock).
    #[getter]
    fn committed_ms(&self) -> i64 {
        self.inner.committed_ms
    }

    /// What it did: ``"inserted"``, ``"replaced"``, ``"retimed"`` (an unchanged recrawl's
    /// record refreshed in place: a new publish time, a raw page that is not byte-identical, or
    /// both), ``"deleted"``, ``"moved"`` (a page held before moved to another cluster)
    /// or ``"representative_changed"``.
    #[getter]
    fn kind(&self) -> &'static str {
        use neardup::ChangeKind as K;
        match &self.inner.kind {
            K::Inserted(_) => "inserted",
            K::Replaced(_) => "replaced",
            K::Retimed { .. } => "retimed",
            K::Deleted { .. } => "deleted",
            K::Moved { .. } => "moved",
            K::RepresentativeChanged { .. } => "representative_changed",
            _ => "unknown",
        }
    }

    /// The page's key (None for ``"representative_changed"``).
    #[getter]
    fn key(&self) -> Option<String> {
        use neardup::ChangeKind as K;
        match &self.inner.kind {
            K::Inserted(p) | K::Replaced(p) => Some(p.key.clone()),
            K::Retimed { key, .. } | K::Deleted { key, .. } | K::Moved { key, .. } => {
                Some(key.clone())
            }
            _ => None,
        }
    }

    /// Inserted, replaced: the page's host.
    #[getter]
    fn host(&self) -> Option<String> {
        self.page().map(|p| p.host.clone())
    }

    /// Inserted, replaced, retimed: the page's publish time, Unix seconds.
    #[getter]
    fn time(&self) -> Option<i64> {
        match &self.inner.kind {
            neardup::ChangeKind::Retimed { time, .. } => Some(*time),
            _ => self.page().map(|p| p.time),
        }
    }

    /// The page's id (None for ``"representative_changed"``).
    #[getter]
    fn doc(&self) -> Option<u32> {
        use neardup::ChangeKind as K;
        match &self.inner.kind {
            K::Inserted(p) | K::Replaced(p) => Some(p.doc),
            K::Retimed { doc, .. } | K::Deleted { doc, .. } | K::Moved { doc, .. } => Some(*doc),
            _ => None,
        }
    }

    /// Inserted, replaced: the page's cluster after the commit; deleted: the cluster it was
    /// in; moved: the cluster it moved to; representative changed: the cluster.
    #[getter]
    fn cluster(&self) -> Option<u32> {
        use neardup::ChangeKind as K;
        match &self.inner.kind {
            K::Inserted(p) | K::Replaced(p) => Some(p.cluster),
            K::Deleted { cluster, .. } | K::RepresentativeChanged { cluster, .. } => Some(*cluster),
            K::Moved { to, .. } => Some(*to),
            _ => None,
        }
    }

    /// Moved: the cluster it left.
    #[getter(from_cluster)]
    fn cluster_left(&self) -> Option<u32> {
        match &self.inner.kind {
            neardup::ChangeKind::Moved { from, .. } => Some(*from),
            _ => None,
        }
    }

    /// Inserted, replaced, moved: the key of the page's cluster's representative after the
    /// commit; representative changed: the new representative.
    #[getter]
    fn representative(&self) -> Option<String> {
        use neardup::ChangeKind as K;
        match &self.inner.kind {
            K::Inserted(p) | K::Replaced(p) => Some(p.representative.clone()),
            K::Moved { representative, .. } | K::RepresentativeChanged { representative, .. } => {
                Some(representative.clone())
            }
            _ => None,
        }
    }

    /// Representative changed: the representative before.
    #[getter]
    fn previous(&self) -> Option<String> {
        match &self.inner.kind {
            neardup::ChangeKind::RepresentativeChanged { previous, .. } => Some(previous.clone()),
            _ => None,
        }
    }

    /// Inserted, replaced: the page's normalized main text, as the index decided on it.
    #[getter]
    fn text(&self) -> Option<String> {
        self.page().map(|p| p.text.clone())
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, &self.bytes)
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, pyo3::types::PyBytes>,))> {
        let py = slf.py();
        let from = slf.get_type().getattr("from_bytes")?;
        Ok((from, (pyo3::types::PyBytes::new(py, &slf.get().bytes),)))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Change>()
            .is_ok_and(|o| o.get().bytes == self.bytes)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        pyo3::types::PyBytes::new(py, &self.bytes).hash()
    }

    fn __repr__(&self) -> String {
        format!(
            "Change(seq={}, kind={:?}, key={:?})",
            self.inner.seq,
            self.kind(),
            self.key().unwrap_or_default()
        )
    }
}
