"""An index handle refuses to be pickled or copied, with the message the docs give."""

from __future__ import annotations

import copy
import pickle

import neardup
import pytest

MESSAGE = "neardup.Index cannot be pickled: open the index inside the actor, or in the stage's setup()"


def test_pickle_refused(tmp_path):
    with neardup.Index(tmp_path / "ix") as ix:
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            with pytest.raises(TypeError) as e:
                pickle.dumps(ix, protocol=protocol)
            assert str(e.value) == MESSAGE
        with pytest.raises(TypeError, match="cannot be pickled"):
            copy.copy(ix)
        with pytest.raises(TypeError, match="cannot be pickled"):
            ix.__reduce__()


def test_results_pickle(tmp_path):
    # The result objects are plain values; they need not be picklable, but they must not
    # hold the index: a verdict outlives its index.
    with neardup.Index(tmp_path / "ix") as ix:
        v = ix.insert("k", text="a short text")
    assert v.doc == 0 and v.representative == "k"
