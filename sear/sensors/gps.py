"""GPS receiver: the antenna's latitude, longitude and altitude, optionally as NMEA 0183 sentences.

Position comes from the exact WGS-84 local tangent plane around the terrain centre (sear.geo). The error
of a real receiver wanders slowly rather than jumping every fix, so noise is a first-order Gauss-Markov
process per axis with correlation time 1 / (2·pi·bandwidth): horizontal 1-sigma per axis is
accuracy/sqrt(2) (so the horizontal RMS error equals the accuracy), vertical 1.5 times the accuracy. On top of
it, optionally, white noise independent from fix to fix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np

from sear.fields import param
from sear.geo import enu_to_geodetic
from sear.sensors.base import RayHits, Sensor
from sear.sensors.config import SensorConfig
from sear.state import VehicleState


@dataclass
class GpsConfig(SensorConfig):
    """GPS receiver: position of its antenna as latitude, longitude, altitude."""

    TYPE: ClassVar[str] = "gps"

    string_type: Literal["decimal", "dms", "nmea"] = param("decimal", type_name="gpsFormat")
    """Output format: decimal degrees, degree/minute/second text, or NMEA 0183 GGA + RMC sentences."""
    update_rate_hz: float = param(1.0, kind="positive")
    """Fixes per second (NEO-6M: up to 5)."""
    accuracy_m: float = param(2.5, kind="nonNegative")
    """Horizontal accuracy when `noise` is on: RMS horizontal error, metres (each of east and north
    gets 1-sigma accuracy/sqrt(2); vertical 1.5 times the accuracy)."""
    bandwidth_hz: float = param(0.01, kind="positive")
    """Bandwidth of the position error: the error is a first-order Gauss-Markov process with
    correlation time 1 / (2·pi·bandwidth), so it wanders slowly like a real receiver's, Hz."""
    white_noise_m: float = param(0.0, kind="nonNegative", group="noise", label="White noise (per fix)")
    """1-sigma of the independent error of each fix on top of the wandering one (receiver noise and
    multipath jitter), m: east and north each get this, up 1.5 times it."""

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
"""UTC date and time of simulated time 0, for NMEA time stamps."""
KNOTS_PER_MPS = 3600.0 / 1852.0


class _LatLonAlt(NamedTuple):
    latitude: float
    longitude: float
    altitude: float


class GpsReading(_LatLonAlt):
    """(latitude, longitude, altitude): decimal degrees north and east, metres above sea level.

    `.nmea` holds the GGA and RMC sentences of the fix (CR LF separated) and `.dms` the
    degree/minute/second text."""

    nmea: str
    dms: str


def nmea_checksum(body: str) -> str:
    """Two hex digits: XOR of the characters between '$' and '*'."""
    value = 0
    for ch in body:
        value ^= ord(ch)
    return f"{value:02X}"


def _nmea_angle(value: float, degree_digits: int) -> tuple[str, bool]:
    value_abs = abs(value)
    degrees = int(value_abs)
    minutes = (value_abs - degrees) * 60.0
    if round(minutes, 5) >= 60.0:
        degrees, minutes = degrees + 1, 0.0
    return f"{degrees:0{degree_digits}d}{minutes:08.5f}", value >= 0


def nmea_sentences(lat: float, lon: float, alt: float, time_s: float, speed_mps: float, course_deg: float,
                   satellites: int = 8, hdop: float = 0.9) -> str:
    """GGA and RMC sentences (with valid checksums) for a fix at simulated time `time_s`."""
    stamp = EPOCH + timedelta(seconds=time_s)
    hhmmss = stamp.strftime("%H%M%S") + f".{stamp.microsecond // 10000:02d}"
    lat_s, north = _nmea_angle(lat, 2)
    lon_s, east = _nmea_angle(lon, 3)
    ns, ew = ("N" if north else "S"), ("E" if east else "W")
    gga = (f"GPGGA,{hhmmss},{lat_s},{ns},{lon_s},{ew},1,{satellites:02d},{hdop:.1f},{alt:.1f},M,0.0,M,,")
    rmc = (f"GPRMC,{hhmmss},A,{lat_s},{ns},{lon_s},{ew},{speed_mps * KNOTS_PER_MPS:.2f},{course_deg:.1f},"
           f"{stamp.strftime('%d%m%y')},,,A")
    return "\r\n".join(f"${s}*{nmea_checksum(s)}" for s in (gga, rmc))


def dms_text(lat: float, lon: float) -> str:
    """Like 35°18'00.000"N 80°42'00.000"W."""
    def one(value: float, pos: str, neg: str) -> str:
        v = abs(value)
        d = int(v)
        m = int((v - d) * 60)
        s = (v - d - m / 60.0) * 3600.0
        if round(s, 3) >= 60.0:
            m, s = m + 1, 0.0
        if m >= 60:
            d, m = d + 1, 0
        return f"{d}°{m:02d}'{s:06.3f}\"{pos if value >= 0 else neg}"
    return f"{one(lat, 'N', 'S')} {one(lon, 'E', 'W')}"


class GpsSensor(Sensor):
    TYPE = "gps"
    TITLE = "GPS"
    DEFINITION = GpsConfig
    FIELDS = ("latitude", "longitude", "altitude")
    config: GpsConfig

    def hud_text(self, reading: Any) -> str:
        if not isinstance(reading, tuple) or len(reading) != 3:
            return super().hud_text(reading)
        return f"{reading[0]:.6f}°, {reading[1]:.6f}°, {reading[2]:.1f} m"

    def __init__(self, config: GpsConfig, rng: np.random.Generator, context) -> None:
        super().__init__(config, rng, context)
        acc = config.accuracy_m
        self.sigma = np.array([acc / math.sqrt(2.0), acc / math.sqrt(2.0), 1.5 * acc])
        self.tau = 1.0 / (2.0 * math.pi * config.bandwidth_hz)
        self.error = rng.normal(0.0, 1.0, 3) * self.sigma if config.noise and acc > 0 else np.zeros(3)
        self.white = np.array([1.0, 1.0, 1.5]) * config.white_noise_m

    def sample(self, state: VehicleState, hits: RayHits | None) -> None:
        position, _ = self.sensor_frame(state)
        if self.config.noise and self.config.accuracy_m > 0 and self.last_sample_time is not None:
            dt = state.time - self.last_sample_time
            decay = math.exp(-dt / self.tau)
            self.error = self.error * decay + self.rng.normal(0.0, 1.0, 3) * self.sigma * math.sqrt(1 - decay**2)
        error = self.error
        if self.config.noise and self.config.white_noise_m > 0:
            error = error + self.rng.normal(0.0, 1.0, 3) * self.white
        east, north, up = position + error
        lat0, lon0, alt0 = self.context.origin
        lat, lon, alt = enu_to_geodetic(east, north, up, lat0, lon0, alt0)
        reading = GpsReading(lat, lon, alt)
        v = state.linear_velocity
        speed = float(math.hypot(v[0], v[1]))
        course = math.degrees(math.atan2(v[0], v[1])) % 360.0
        reading.nmea = nmea_sentences(lat, lon, alt, state.time, speed, course)
        reading.dms = dms_text(lat, lon)
        self.reading = reading
