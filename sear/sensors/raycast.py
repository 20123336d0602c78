"""The one place SEAR casts rays: every ray of every sensor of a tick goes through here in one batch.

pybullet's rayTestBatch takes at most 16,383 rays per call (a numpy batch of exactly 16,384 silently
returns nothing), so larger batches are split. The robot never sees itself: its bodies carry the
collision group bit ROBOT_COLLISION_GROUP and the rays' mask leaves that bit out.
"""

from __future__ import annotations

import operator

import numpy as np
import pybullet as p

from sear.physics.vehicle import ROBOT_COLLISION_GROUP
from sear.sensors.base import RayHits

MAX_BATCH = 16_383
_FRACTION = operator.itemgetter(2)


class RayCaster:
    """Casts batches of rays in a pybullet client, ignoring the given (robot) bodies."""

    def __init__(self, client: int, ignore_bodies: list[int]) -> None:
        self.client = client
        self.mask = 0xFFFF & ~ROBOT_COLLISION_GROUP
        for body in ignore_bodies:
            # Idempotent: the vehicle already puts its chassis in this group.
            p.setCollisionFilterGroupMask(body, -1, ROBOT_COLLISION_GROUP, self.mask, physicsClientId=client)
        self.rays_cast = 0

    def cast(self, starts: np.ndarray, ends: np.ndarray) -> RayHits:
        """Cast rays from starts to ends ((N, 3) world frame, m); distances are from each start."""
        n = len(starts)
        starts = np.ascontiguousarray(starts, dtype=np.float64)
        ends = np.ascontiguousarray(ends, dtype=np.float64)
        results: list = []
        for lo in range(0, n, MAX_BATCH):
            results.extend(p.rayTestBatch(starts[lo:lo + MAX_BATCH], ends[lo:lo + MAX_BATCH], numThreads=0,
                                          collisionFilterMask=self.mask, physicsClientId=self.client))
        # A miss reports fraction 1.0. Only the fractions are unpacked here: positions follow from them
        # and normals are fetched by the sensors that need them (RayHits.normals).
        fraction = np.fromiter(map(_FRACTION, results), dtype=np.float64, count=n)
        hit = fraction < 1.0
        self.rays_cast += n
        vectors = ends - starts
        distance = np.where(hit, fraction * np.sqrt(np.einsum("ij,ij->i", vectors, vectors)), np.inf)
        return RayHits(hit=hit, distance=distance, starts=starts, ends=ends, fraction=fraction, raw=results)
