//! `neardup._neardup.Components` and `close_simhash_pairs`: S3's connected components over
//! bulk edges (SCALEOUT §5 S3, §7.1), in arrays of native-endian integers (a numpy array's
//! ``tobytes()``; ``numpy.frombuffer`` reads the answers), never a Python call per edge.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::errors::{invalid, IntoPy};

/// Native-endian `u64`s from bytes; `what` names the argument in the error.
pub(crate) fn u64s(py: Python<'_>, bytes: &[u8], what: &str) -> PyResult<Vec<u64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(invalid(
            py,
            format!(
                "{what}: node ids are 8 bytes each (uint64): {} bytes is not a whole number",
                bytes.len()
            ),
        ));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

pub(crate) fn u64_bytes<'py>(py: Python<'py>, values: &[u64]) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    PyBytes::new(py, &bytes)
}

/// Native-endian `u32`s from bytes; `what` names the argument in the error.
fn u32s(py: Python<'_>, bytes: &[u8], what: &str) -> PyResult<Vec<u32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(invalid(
            py,
            format!(
                "{what}: 4 bytes each (uint32): {} bytes is not a whole number",
                bytes.len()
            ),
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap_or([0; 4])))
        .collect())
}

fn u32_bytes<'py>(py: Python<'py>, values: &[u32]) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    PyBytes::new(py, &bytes)
}

/// A union-find over ``uint64`` node ids fed with edges in bulk (S3 of the distributed merge).
/// Arrays are bytes of native-endian integers: ``numpy.asarray(x, dtype=numpy.uint64).tobytes()``
/// in, ``numpy.frombuffer(b, dtype=...)`` out. Nodes and components are numbered in the order
/// nodes are first seen.
#[pyclass(name = "Components", module = "neardup._neardup")]
#[derive(Default)]
pub(crate) struct PyComponents {
    inner: neardup::merge::Components,
}

#[pymethods]
impl PyComponents {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Adds nodes (``uint64`` bytes), each its own component unless an edge joins it.
    fn add_nodes(&mut self, py: Python<'_>, nodes: &[u8]) -> PyResult<()> {
        let nodes = u64s(py, nodes, "nodes")?;
        let inner = &mut self.inner;
        py.detach(|| inner.add_nodes(&nodes));
        Ok(())
    }

    /// Joins ``a[i]`` and ``b[i]`` for every ``i`` (two ``uint64`` arrays of one length).
    ///
    /// Raises ``InvalidArgumentError`` for arrays of different lengths or a length that is not
    /// a whole number of ``uint64``.
    fn add_edges(&mut self, py: Python<'_>, a: &[u8], b: &[u8]) -> PyResult<()> {
        if a.len() != b.len() {
            return Err(invalid(
                py,
                format!(
                    "edges: {} bytes of sources and {} of targets",
                    a.len(),
                    b.len()
                ),
            ));
        }
        let (a, b) = (u64s(py, a, "a")?, u64s(py, b, "b")?);
        let inner = &mut self.inner;
        py.detach(|| inner.add_edges(&a, &b));
        Ok(())
    }

    /// Adds nodes (``uint64`` bytes) with their weights (``uint32`` bytes, one a node): a
    /// component's size is its nodes' weight (a node seen before keeps its own; others weigh 1).
    ///
    /// Raises ``InvalidArgumentError`` for arrays of different lengths.
    fn add_weighted_nodes(&mut self, py: Python<'_>, nodes: &[u8], weights: &[u8]) -> PyResult<()> {
        let nodes = u64s(py, nodes, "nodes")?;
        let weights = u32s(py, weights, "weights")?;
        if nodes.len() != weights.len() {
            return Err(invalid(
                py,
                format!("{} nodes and {} weights", nodes.len(), weights.len()),
            ));
        }
        let inner = &mut self.inner;
        py.detach(|| inner.add_weighted_nodes(&nodes, &weights));
        Ok(())
    }

    /// Joins ``a[i]`` and ``b[i]`` in order (two ``uint64`` arrays of one length), each only
    /// when the joined component would weigh at most ``cap``: the edges given first are kept,
    /// those that would pass the cap are cut (SCALEOUT §7.1 option 2). Returns how many were
    /// cut.
    ///
    /// Raises ``InvalidArgumentError`` as ``add_edges`` does.
    fn add_edges_capped(&mut self, py: Python<'_>, a: &[u8], b: &[u8], cap: u64) -> PyResult<u64> {
        if a.len() != b.len() {
            return Err(invalid(
                py,
                format!(
                    "edges: {} bytes of sources and {} of targets",
                    a.len(),
                    b.len()
                ),
            ));
        }
        let (a, b) = (u64s(py, a, "a")?, u64s(py, b, "b")?);
        let inner = &mut self.inner;
        Ok(py.detach(|| inner.add_edges_capped(&a, &b, cap)))
    }

    /// The partial forest: ``(nodes, roots)`` as ``uint64`` bytes, every node not alone in its
    /// component with its component's root. Another ``Components``' ``merge_forest`` of it
    /// joins what these edges joined.
    fn forest<'py>(&mut self, py: Python<'py>) -> (Bound<'py, PyBytes>, Bound<'py, PyBytes>) {
        let inner = &mut self.inner;
        let (nodes, roots) = py.detach(|| inner.forest());
        (u64_bytes(py, &nodes), u64_bytes(py, &roots))
    }

    /// Merges a partial forest from ``forest()`` (of this builder or another).
    ///
    /// Raises ``InvalidArgumentError`` as ``add_edges`` does.
    fn merge_forest(&mut self, py: Python<'_>, nodes: &[u8], roots: &[u8]) -> PyResult<()> {
        self.add_edges(py, nodes, roots)
    }

    /// ``(nodes, labels, sizes)``: every node seen (``uint64`` bytes, first-seen order), its
    /// component id (``uint32`` bytes; ids dense, in the order of each component's first node)
    /// and each component's size (``uint32`` bytes, by component id).
    fn labels<'py>(
        &mut self,
        py: Python<'py>,
    ) -> (
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
        Bound<'py, PyBytes>,
    ) {
        let inner = &mut self.inner;
        let (nodes, labels, sizes) = py.detach(|| inner.labels());
        (
            u64_bytes(py, &nodes),
            u32_bytes(py, &labels),
            u32_bytes(py, &sizes),
        )
    }

    /// How many distinct nodes were seen.
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __repr__(&self) -> String {
        format!("Components(nodes={})", self.inner.len())
    }
}

/// The pairs ``(i, j)``, ``i < j``, of ``hashes`` (``uint64`` bytes) whose simhashes differ in
/// at most ``distance`` bits (inclusive), each once, as two ``uint32`` arrays (bytes), sorted.
///
/// Raises ``InvalidArgumentError`` for bytes that are not a whole number of ``uint64``.
#[pyfunction]
pub(crate) fn close_simhash_pairs<'py>(
    py: Python<'py>,
    hashes: &[u8],
    distance: u32,
) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    let hashes = u64s(py, hashes, "hashes")?;
    let pairs = py.detach(|| neardup::merge::close_simhash_pairs(&hashes, distance));
    let (a, b): (Vec<u32>, Vec<u32>) = pairs.into_iter().unzip();
    Ok((u32_bytes(py, &a), u32_bytes(py, &b)))
}

/// Packed 9-byte posting keys and their ``uint64`` owners, from bytes.
fn keys_and_owners(
    py: Python<'_>,
    packed: &[u8],
    owners: &[u8],
) -> PyResult<(Vec<[u8; 9]>, Vec<u64>)> {
    Ok((
        crate::partition::unpack_keys(py, packed)?,
        u64s(py, owners, "owners")?,
    ))
}

/// A key partition's probes for S3 (``neardup.ProbeJoin``): posting keys and simhashes added
/// block by block, each with its ``uint64`` owner node, then joined through the partition's
/// postings by ``Index.probe_forest`` or ``Partition.probe_forest``. It holds the distinct keys and simhashes and the
/// union-find of their owners, never the probes.
#[pyclass(name = "ProbeJoin", module = "neardup._neardup")]
#[derive(Default)]
pub(crate) struct PyProbeJoin {
    pub(crate) inner: neardup::merge::ProbeJoin,
}

#[pymethods]
impl PyProbeJoin {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Adds posting keys (``packed``: 9 bytes each) with their owners (``uint64`` bytes).
    fn add_keys(&mut self, py: Python<'_>, packed: &[u8], owners: &[u8]) -> PyResult<()> {
        let (keys, owners) = keys_and_owners(py, packed, owners)?;
        let inner = &mut self.inner;
        py.detach(|| inner.add_keys(&keys, &owners)).py(py)
    }

    /// Adds simhashes with their owners (both ``uint64`` bytes).
    fn add_simhashes(&mut self, py: Python<'_>, simhashes: &[u8], owners: &[u8]) -> PyResult<()> {
        let simhashes = u64s(py, simhashes, "simhashes")?;
        let owners = u64s(py, owners, "owners")?;
        let inner = &mut self.inner;
        py.detach(|| inner.add_simhashes(&simhashes, &owners))
            .py(py)
    }
}

/// A key partition's share of S3 as ``probe_forest`` returns it: ``(nodes, roots, counts)``,
/// ``uint64`` bytes for ``neardup.Components.merge_forest`` and the distinct ``keys`` and
/// ``simhashes`` looked up and the ``standing`` pages found.
pub(crate) fn forest_tuple<'py>(
    py: Python<'py>,
    f: neardup::merge::ProbeForest,
) -> PyResult<Bound<'py, PyTuple>> {
    let counts = PyDict::new(py);
    counts.set_item("keys", f.keys)?;
    counts.set_item("simhashes", f.simhashes)?;
    counts.set_item("standing", f.standing)?;
    (u64_bytes(py, &f.nodes), u64_bytes(py, &f.roots), counts).into_pyobject(py)
}

/// A key partition's keys with every owner filed under each (``neardup.KeyStars``), added
/// block by block, then read through the partition's postings by ``Index.key_stars`` or
/// ``Partition.key_stars``: the third round of a component over the cap in ``neardup.ray``'s
/// S3 (SCALEOUT §7.1 option 2).
#[pyclass(name = "KeyStars", module = "neardup._neardup")]
#[derive(Default)]
pub(crate) struct PyKeyStars {
    pub(crate) inner: neardup::merge::KeyStars,
}

#[pymethods]
impl PyKeyStars {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Adds posting keys (``packed``: 9 bytes each) with their owners (``uint64`` bytes).
    fn add_keys(&mut self, py: Python<'_>, packed: &[u8], owners: &[u8]) -> PyResult<()> {
        let (keys, owners) = keys_and_owners(py, packed, owners)?;
        let inner = &mut self.inner;
        py.detach(|| inner.add_keys(&keys, &owners)).py(py)
    }
}

/// ``key_stars``'s answer: ``(a, b, weights, keys)``, the edges as ``uint64`` bytes, their
/// keys' owners as ``uint32`` bytes, and the distinct keys looked up.
pub(crate) fn stars_tuple<'py>(
    py: Python<'py>,
    e: neardup::merge::StarEdges,
) -> PyResult<Bound<'py, PyTuple>> {
    (
        u64_bytes(py, &e.a),
        u64_bytes(py, &e.b),
        u32_bytes(py, &e.weight),
        e.keys,
    )
        .into_pyobject(py)
}
