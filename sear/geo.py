"""Exact WGS-84 conversions between geodetic coordinates and the local ENU world frame.

The world frame is the local tangent plane (east, north, up; metres) at the terrain centre. Converting
through Earth-centred Earth-fixed (ECEF) coordinates is exact on the ellipsoid, unlike the flat
projection of the original SEAR, whose error grows with the square of the distance from the centre.
"""

from __future__ import annotations

import math

import numpy as np

WGS84_A = 6_378_137.0
"""Semi-major axis, m."""
WGS84_F = 1.0 / 298.257223563
"""Flattening."""
WGS84_E2 = WGS84_F * (2.0 - WGS84_F)
"""First eccentricity squared."""


def geodetic_to_ecef(lat_deg: float, lon_deg: float, alt_m: float) -> np.ndarray:
    """ECEF position (m) of latitude, longitude (decimal degrees) and height above the ellipsoid (m)."""
    lat, lon = math.radians(lat_deg), math.radians(lon_deg)
    n = WGS84_A / math.sqrt(1.0 - WGS84_E2 * math.sin(lat) ** 2)
    return np.array([
        (n + alt_m) * math.cos(lat) * math.cos(lon),
        (n + alt_m) * math.cos(lat) * math.sin(lon),
        (n * (1.0 - WGS84_E2) + alt_m) * math.sin(lat),
    ])


def ecef_to_geodetic(xyz: np.ndarray) -> tuple[float, float, float]:
    """Latitude, longitude (decimal degrees) and height (m) of an ECEF position (m); exact to < 1 mm."""
    x, y, z = (float(c) for c in xyz)
    lon = math.atan2(y, x)
    p = math.hypot(x, y)
    lat = math.atan2(z, p * (1.0 - WGS84_E2))
    for _ in range(10):
        sin_lat = math.sin(lat)
        n = WGS84_A / math.sqrt(1.0 - WGS84_E2 * sin_lat * sin_lat)
        # Divide by the larger of cos and sin so neither the equator nor the poles lose precision.
        h = p / math.cos(lat) - n if abs(lat) < math.radians(45.0) else z / sin_lat - n * (1.0 - WGS84_E2)
        new_lat = math.atan2(z, p * (1.0 - WGS84_E2 * n / (n + h)))
        if abs(new_lat - lat) < 1e-15:
            lat = new_lat
            break
        lat = new_lat
    return math.degrees(lat), math.degrees(lon), h


def _enu_rotation(lat0_deg: float, lon0_deg: float) -> np.ndarray:
    """Rows: the east, north and up unit vectors at the origin, in ECEF."""
    lat, lon = math.radians(lat0_deg), math.radians(lon0_deg)
    sl, cl, sp, cp = math.sin(lon), math.cos(lon), math.sin(lat), math.cos(lat)
    return np.array([
        [-sl, cl, 0.0],
        [-sp * cl, -sp * sl, cp],
        [cp * cl, cp * sl, sp],
    ])


def geodetic_to_enu(lat_deg: float, lon_deg: float, alt_m: float,
                    lat0_deg: float, lon0_deg: float, alt0_m: float) -> np.ndarray:
    """ENU position (m) of a geodetic point relative to the origin (lat0, lon0, alt0)."""
    d = geodetic_to_ecef(lat_deg, lon_deg, alt_m) - geodetic_to_ecef(lat0_deg, lon0_deg, alt0_m)
    return _enu_rotation(lat0_deg, lon0_deg) @ d


def enu_to_geodetic(east_m: float, north_m: float, up_m: float,
                    lat0_deg: float, lon0_deg: float, alt0_m: float) -> tuple[float, float, float]:
    """Latitude, longitude (decimal degrees) and altitude (m) of an ENU point around the origin."""
    ecef = geodetic_to_ecef(lat0_deg, lon0_deg, alt0_m) + _enu_rotation(lat0_deg, lon0_deg).T @ np.array(
        [east_m, north_m, up_m], dtype=float)
    return ecef_to_geodetic(ecef)


def utm_to_geodetic(easting_m: float, northing_m: float, zone: int, south: bool = False) -> tuple[float, float]:
    """Latitude and longitude (decimal degrees, WGS-84) of a point of UTM zone `zone` (1-60; `south`: the
    southern hemisphere's false northing) given in metres: Krüger's series to n³, within a millimetre
    inside a zone (the formulas of Wikipedia's "Universal Transverse Mercator coordinate system")."""
    n = WGS84_F / (2.0 - WGS84_F)
    big_a = WGS84_A / (1.0 + n) * (1.0 + n * n / 4.0 + n ** 4 / 64.0)
    beta = (n / 2.0 - 2.0 / 3.0 * n * n + 37.0 / 96.0 * n ** 3, n * n / 48.0 + n ** 3 / 15.0, 17.0 / 480.0 * n ** 3)
    delta = (2.0 * n - 2.0 / 3.0 * n * n - 2.0 * n ** 3, 7.0 / 3.0 * n * n - 8.0 / 5.0 * n ** 3, 56.0 / 15.0 * n ** 3)
    k0 = 0.9996
    xi = (northing_m - (10_000_000.0 if south else 0.0)) / (k0 * big_a)
    eta = (easting_m - 500_000.0) / (k0 * big_a)
    xi_p = xi - sum(b * math.sin(2 * j * xi) * math.cosh(2 * j * eta) for j, b in enumerate(beta, 1))
    eta_p = eta - sum(b * math.cos(2 * j * xi) * math.sinh(2 * j * eta) for j, b in enumerate(beta, 1))
    chi = math.asin(math.sin(xi_p) / math.cosh(eta_p))
    lat = chi + sum(d * math.sin(2 * j * chi) for j, d in enumerate(delta, 1))
    lon0 = math.radians(zone * 6.0 - 183.0)
    lon = lon0 + math.atan2(math.sinh(eta_p), math.cos(xi_p))
    return math.degrees(lat), math.degrees(lon)
