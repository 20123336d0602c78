"""WGS-84 geodetic <-> ENU against geographiclib's geodesics (an independent ellipsoid solver)."""

from __future__ import annotations

import math

import pytest
from geographiclib.geodesic import Geodesic

from sear.geo import enu_to_geodetic, geodetic_to_enu

ORIGINS = [(35.3, -80.7, 0.0), (-33.9, 151.2, 250.0), (0.0, 0.0, 0.0), (78.2, 15.6, 10.0)]


@pytest.mark.parametrize("origin", ORIGINS)
@pytest.mark.parametrize("azimuth", [0.0, 30.0, 90.0, 200.0])
def test_a_point_a_kilometre_away_lands_at_its_geodesic_distance_and_bearing(origin, azimuth):
    lat0, lon0, alt0 = origin
    target = Geodesic.WGS84.Direct(lat0, lon0, azimuth, 1000.0)
    east, north, up = geodetic_to_enu(target["lat2"], target["lon2"], alt0, lat0, lon0, alt0)
    # Chord and geodesic differ by d³/(24·R²) ≈ 1e-6 m at 1 km; both points at height alt0 lie on a
    # sphere (R + alt0)/R larger than the ellipsoid the geodesic runs on (R ≈ 6.371e6 m).
    assert math.hypot(east, north, up) == pytest.approx(1000.0 * (1 + alt0 / 6.371e6), abs=1e-3)
    # The bearing of a 1 km chord in the tangent plane is the geodesic's start azimuth to ~1e-4 rad.
    bearing = math.degrees(math.atan2(east, north)) % 360.0
    assert min(abs(bearing - azimuth), 360.0 - abs(bearing - azimuth)) < 0.02
    # The ellipsoid falls away from the tangent plane by d²/(2·R), R 6.33-6.40e6 m: 7.8-7.9 cm.
    assert -0.080 < up < -0.077


@pytest.mark.parametrize("origin", ORIGINS)
def test_enu_round_trip_is_exact(origin):
    lat0, lon0, alt0 = origin
    for east, north, up in [(0.0, 0.0, 0.0), (12.5, -40.0, 3.0), (-5000.0, 2500.0, -30.0)]:
        lat, lon, alt = enu_to_geodetic(east, north, up, lat0, lon0, alt0)
        back = geodetic_to_enu(lat, lon, alt, lat0, lon0, alt0)
        assert back == pytest.approx([east, north, up], abs=1e-6)


def test_height_is_straight_up_at_the_origin():
    assert geodetic_to_enu(35.3, -80.7, 12.0, 35.3, -80.7, 2.0) == pytest.approx([0.0, 0.0, 10.0], abs=1e-9)
