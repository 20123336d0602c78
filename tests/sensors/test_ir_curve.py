"""Analog Sharp rangers give their datasheet's output voltage, folded back nearer than its peak, and an ADC
reads it; the distance stays as ground truth.

The datasheet points are typed in here again (from the parts' figures, as docs/sensors/ quotes them), so a
change to the model's table fails these tests."""

from __future__ import annotations

import math

import numpy as np
import pybullet as p
import pytest

from sear.sensors.config import Pose
from sear.sensors.range import InfraredConfig, IrOutput
from sear.sensors.suite import SensorSuite
from sear.state import VehicleState

GP2Y0A02YK0F = [(15, 2.75), (20, 2.51), (30, 1.99), (40, 1.52), (50, 1.25), (60, 1.04), (70, 0.87), (80, 0.79),
                (90, 0.74), (100, 0.69), (110, 0.60), (120, 0.55), (130, 0.50), (140, 0.47), (150, 0.45)]
GP2D12 = [(10, 2.45), (20, 1.38), (30, 0.975), (40, 0.76), (50, 0.62), (60, 0.54), (70, 0.48), (80, 0.42)]


@pytest.fixture
def client():
    cid = p.connect(p.DIRECT)
    yield cid
    p.disconnect(cid)


def reading(client, part, wall_cm, **fields) -> IrOutput:
    """One sample of a single-ray ranger (beam no wider than its resolution) with a wall at `wall_cm`."""
    body = None
    if wall_cm is not None:
        shape = p.createCollisionShape(p.GEOM_BOX, halfExtents=(0.05, 2.0, 1.0), physicsClientId=client)
        body = p.createMultiBody(0, shape, basePosition=(wall_cm / 100 + 0.05, 0, 0.5), physicsClientId=client)
    values = dict(name="ir", output_curve=part, beam_width_cm=0.5, resolution_cm=1.0, pose=Pose(z=0.1))
    values.update(fields)
    suite = SensorSuite([InfraredConfig(**values)], rng=np.random.default_rng(0), client=client, ignore_bodies=[])
    suite.update(VehicleState(time=0.0, position=np.zeros(3), orientation=np.array([0.0, 0.0, 0.0, 1.0]),
                              linear_velocity=np.zeros(3), angular_velocity=np.zeros(3), wheel_angles={},
                              wheel_radii={}))
    if body is not None:
        p.removeBody(body, physicsClientId=client)
    return suite.read("ir")


@pytest.mark.parametrize("part,points,max_cm,min_cm", [("Sharp GP2Y0A02YK0F", GP2Y0A02YK0F, 150.0, 20.0),
                                                       ("Sharp GP2D12", GP2D12, 80.0, 10.0)])
def test_the_output_voltage_is_the_datasheet_curve_and_the_adc_counts_it(client, part, points, max_cm, min_cm):
    assert len(points) >= 8
    for distance_cm, volts in points:
        # Rays a little longer than the curve's last point, so a wall there is hit (a ray's end is not).
        out = reading(client, part, distance_cm, max_range_cm=max_cm + 10, min_range_cm=min_cm)
        assert out.voltage == pytest.approx(volts, rel=0.02), distance_cm
        assert out.distance == pytest.approx(distance_cm / 100, abs=1e-4)  # ground truth kept
        assert out.adc == math.floor(out.voltage / 5.0 * 1024)  # 10 bits over 5 V, the defaults
        # Read back through the curve, a distance on the curve reads within a couple of ADC steps of itself.
        assert out.apparent == pytest.approx(distance_cm / 100, rel=0.03), distance_cm


def test_a_target_at_half_the_minimum_range_reads_beyond_it_as_the_curve_folds_back(client):
    # GP2Y0A02YK0F: peak 2.75 V at 15 cm; at 10 cm (half its 20 cm minimum) the fold-back line from 0 V at
    # 0 cm gives 2.75 x 10/15 = 1.833 V, which the curve's far branch gives between 30 cm (1.99 V) and
    # 40 cm (1.52 V): 30 + 10 x (1.99 - 1.833) / (1.99 - 1.52) = 33.3 cm.
    out = reading(client, "Sharp GP2Y0A02YK0F", 10.0, max_range_cm=150.0, min_range_cm=20.0)
    assert out.distance == pytest.approx(0.10, abs=1e-4)
    assert out.voltage == pytest.approx(2.75 * 10 / 15, rel=1e-6)
    volts = (math.floor(2.75 * 10 / 15 / 5.0 * 1024) + 0.5) * 5.0 / 1024  # the ADC's step
    assert out.apparent == pytest.approx((30 + 10 * (1.99 - volts) / (1.99 - 1.52)) / 100, abs=1e-6)
    assert out.apparent > 0.20
    # GP2D12 at 5 cm (half its 10 cm minimum): 2.45 x 5/10 = 1.225 V, between 20 cm (1.38 V) and 30 cm.
    near = reading(client, "Sharp GP2D12", 5.0)
    assert near.voltage == pytest.approx(1.225, rel=1e-6) and near.apparent > 0.20


def test_nothing_in_range_reads_the_far_end_of_the_curve_and_no_curve_reads_metres(client):
    out = reading(client, "Sharp GP2D12", None)
    assert out.distance is None and out.voltage == pytest.approx(0.42) and out.apparent == pytest.approx(0.80, abs=0.02)
    assert reading(client, "none", 50.0) == pytest.approx(0.50, abs=1e-4)  # the plain model: metres


def test_a_12_bit_adc_at_3_3_v_counts_finer(client):
    out = reading(client, "Sharp GP2D12", 40.0, adc_bits=12, adc_reference_v=3.3)
    assert out.adc == math.floor(0.76 / 3.3 * 4096)
