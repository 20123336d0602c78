"""Where the sensors cast their rays: every ray of every sensor due on a tick goes through here in one batch.

(The physics casts rays of its own: the raycast vehicle's wheel rays in sear.physics.vehicle and the
terrain height look-ups in sear.physics.world.)

pybullet's rayTestBatch takes at most 16,383 rays per call (a numpy batch of exactly 16,384 silently
returns nothing), so larger batches are split. The robot never sees itself: its bodies carry the
collision group bit ROBOT_COLLISION_GROUP and the rays' mask leaves that bit out.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
import pybullet as p

from sear.collision import ROBOT_COLLISION_GROUP

MAX_BATCH = 16_383
RAY_THREADS = 0
"""rayTestBatch's numThreads: 0 uses every core (on two cores a 1,132-ray batch takes ~60 % of the
single-threaded time)."""
_FRACTION = operator.itemgetter(2)


class RayCaster:
    """Casts batches of rays in a pybullet client, ignoring the given (robot) bodies."""

    def __init__(self, client: int, ignore_bodies: list[int]) -> None:
        self.client = client
        self.mask = 0xFFFF & ~ROBOT_COLLISION_GROUP
        for body in ignore_bodies:
            # Idempotent: the vehicle already puts its chassis in this group.
            p.setCollisionFilterGroupMask(body, -1, ROBOT_COLLISION_GROUP, self.mask, physicsClientId=client)

    def cast(self, starts: np.ndarray | list, ends: np.ndarray | list, parent: int | None = None
             ) -> tuple[np.ndarray, Sequence[Any]]:
        """Cast rays from starts to ends ((N, 3), m): in the world frame, or with `parent` in the frame of
        that body (pybullet moves them with it). Returns each ray's hit fraction of its length (1.0 for a
        miss) and pybullet's result tuples (hit points and normals in the world frame; see
        RayHits.normals)."""
        n = len(starts)
        if isinstance(starts, np.ndarray):
            starts = np.ascontiguousarray(starts, dtype=np.float64)
            ends = np.ascontiguousarray(ends, dtype=np.float64)
        frame = {} if parent is None else {"parentObjectUniqueId": parent, "parentLinkIndex": -1}
        if n <= MAX_BATCH:
            results = p.rayTestBatch(starts, ends, numThreads=RAY_THREADS, collisionFilterMask=self.mask,
                                     physicsClientId=self.client, **frame)
        else:
            results = []
            for lo in range(0, n, MAX_BATCH):
                results.extend(p.rayTestBatch(starts[lo:lo + MAX_BATCH], ends[lo:lo + MAX_BATCH],
                                              numThreads=RAY_THREADS, collisionFilterMask=self.mask,
                                              physicsClientId=self.client, **frame))
        return np.fromiter(map(_FRACTION, results), dtype=np.float64, count=n), results
