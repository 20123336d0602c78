"""The node check before a Ray batch (sear.batch.rayrun.check_nodes): a node where SEAR cannot be imported
or is another version stops the batch with one message naming each such node and what to install; a
cluster whose nodes all have this SEAR passes. The check's function belongs to no module, so Ray ships its
code (checked by pickling it); the cluster is a stand-in that answers for each node what the check returns
there."""

from __future__ import annotations

import pickle

import pytest

pytest.importorskip("ray", reason="the optional Ray extra is not installed (pip install -e '.[ray]')")

from sear import __version__
from sear.batch import rayrun


class FakeCluster:
    """ray's calls check_nodes makes, with each node's answer given."""

    def __init__(self, answers: dict[str, tuple]) -> None:
        self.answers = answers
        self.exceptions = pytest.importorskip("ray").exceptions
        self.pinned: list[str] = []

    def nodes(self) -> list[dict]:
        return [{"NodeID": node, "Alive": True} for node in self.answers] + [{"NodeID": "dead", "Alive": False}]

    def remote(self, **_options):
        cluster = self

        class Remote:
            def options(self, scheduling_strategy):
                cluster.pinned.append(scheduling_strategy.node_id)
                return self

            def remote(self):
                return cluster.pinned[-1]

        return lambda function: Remote()

    def get(self, node: str) -> tuple:
        return self.answers[node]


def test_nodes_without_sear_or_with_another_version_stop_the_batch_naming_them():
    cluster = FakeCluster({
        "a" * 56: ("a" * 56, "head", __version__, None),
        "b" * 56: ("b" * 56, "second", None, "ModuleNotFoundError: No module named 'sear'"),
        "c" * 56: ("c" * 56, "third", "0.0.1", None),
    })
    with pytest.raises(rayrun.RayNodeError) as caught:
        rayrun.check_nodes(cluster)
    message = str(caught.value)
    assert cluster.pinned == ["a" * 56, "b" * 56, "c" * 56]  # one check pinned to each alive node
    assert "2 of the Ray cluster's 3 node(s)" in message
    assert "node bbbbbbbbbbbb (second): SEAR cannot be imported there (ModuleNotFoundError" in message
    assert "node cccccccccccc (third): SEAR 0.0.1 is installed there" in message
    assert "head" not in message and f"pip install 'sear[ray]=={__version__}'" in message


def test_a_cluster_whose_nodes_have_this_sear_passes_and_the_check_travels_as_code():
    cluster = FakeCluster({"a" * 56: ("a" * 56, "head", __version__, None)})
    assert rayrun.check_nodes(cluster) == {"a" * 56: "head"}
    probe = rayrun._probe()
    assert probe.__module__ is None  # shipped by value: a node without SEAR can still load it
    import ray.cloudpickle

    shipped = ray.cloudpickle.dumps(probe)
    assert b"_make_function" in shipped and b"sear.batch.rayrun" not in shipped  # its code, not a reference
    assert pickle.loads(shipped).__code__.co_names == probe.__code__.co_names
