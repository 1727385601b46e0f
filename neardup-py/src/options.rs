//! Keyword arguments to neardup's option structs ([`neardup::IndexOptions`],
//! [`neardup::SignatureConfig`], [`neardup::VerifyConfig`]): the kwargs become JSON and are laid
//! over the defaults' JSON, field by field, so that a nested struct can be given in part
//! (`signature={"sketch_size": 0}`) and a misspelt name is an error rather than ignored.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::errors::{invalid, invalid_type};

/// A Python value as JSON (None, bool, int, float, str, dict with str keys, list, tuple).
pub(crate) fn to_json(v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if v.is_instance_of::<PyInt>() {
        if let Ok(i) = v.extract::<i64>() {
            return Ok(Value::from(i));
        }
        return Ok(Value::from(v.extract::<u64>()?));
    }
    if let Ok(f) = v.cast::<PyFloat>() {
        return Ok(serde_json::Number::from_f64(f.value())
            .map(Value::Number)
            .unwrap_or(Value::Null));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut m = Map::new();
        for (k, v) in d.iter() {
            let k: String = k
                .extract()
                .map_err(|_| invalid_type(v.py(), "option names must be strings"))?;
            m.insert(k, to_json(&v)?);
        }
        return Ok(Value::Object(m));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for item in v.try_iter()? {
            out.push(to_json(&item?)?);
        }
        return Ok(Value::Array(out));
    }
    Err(invalid_type(
        v.py(),
        format!(
            "an option value must be None, a bool, a number, a string, a list or a dict, not {}",
            v.get_type().name()?
        ),
    ))
}

/// `given` laid over `base`: objects merge key by key (a key `base` lacks is an error naming
/// its path), anything else replaces. A `method` given as a string is the method of that name
/// with its default parameters.
fn overlay(py: Python<'_>, base: &mut Value, given: Value, path: &str) -> PyResult<()> {
    match (base, given) {
        (Value::Object(b), Value::Object(g)) => {
            for (k, v) in g {
                let here = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                let v = match (k.as_str(), v) {
                    ("method", Value::String(name)) => method_json(py, &name)?,
                    (_, v) => v,
                };
                match b.get_mut(&k) {
                    Some(slot) if slot.is_object() && v.is_object() && k != "method" => {
                        overlay(py, slot, v, &here)?
                    }
                    Some(slot) => *slot = v,
                    // Fields left out of the defaults' JSON when at their default (the method).
                    None if k == "method" => {
                        b.insert(k, v);
                    }
                    None => {
                        let mut known: Vec<&String> = b.keys().collect();
                        known.sort();
                        return Err(invalid_type(
                            py,
                            format!(
                                "unknown option `{here}`; the options here are: {}",
                                known
                                    .iter()
                                    .map(|s| s.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        ));
                    }
                }
            }
            Ok(())
        }
        (b, g) => {
            *b = g;
            Ok(())
        }
    }
}

fn method_json(py: Python<'_>, name: &str) -> PyResult<Value> {
    let m = neardup::Method::from_name(name).ok_or_else(|| {
        invalid(
            py,
            format!(
                "unknown method {name:?}; the methods are: {}",
                neardup::Method::NAMES.join(", ")
            ),
        )
    })?;
    serde_json::to_value(&m).map_err(|e| invalid(py, e.to_string()))
}

/// `T`'s defaults with the keyword arguments laid over them.
pub(crate) fn from_kwargs<T: Default + Serialize + DeserializeOwned>(
    py: Python<'_>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<T> {
    let Some(kwargs) = kwargs.filter(|k| !k.is_empty()) else {
        return Ok(T::default());
    };
    let mut base = serde_json::to_value(T::default()).map_err(|e| invalid(py, e.to_string()))?;
    overlay(py, &mut base, to_json(kwargs.as_any())?, "")?;
    serde_json::from_value(base).map_err(|e| {
        let message = format!("bad option value: {e}");
        // serde's "invalid type: string \"yes\", expected a boolean".
        if e.to_string().starts_with("invalid type") {
            invalid_type(py, message)
        } else {
            invalid(py, message)
        }
    })
}

/// A value as a Python object through JSON (dicts, lists, numbers, strings).
pub(crate) fn to_python<'py, T: Serialize>(py: Python<'py>, v: &T) -> PyResult<Bound<'py, PyAny>> {
    let s = serde_json::to_string(v).map_err(|e| invalid(py, e.to_string()))?;
    py.import("json")?.call_method1("loads", (s,))
}
