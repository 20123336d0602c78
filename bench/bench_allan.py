"""Allan deviation of a simulated IMU at rest: does the noise model give back the datasheet's figures?

Two hours of a gyroscope and an accelerometer lying still (the sensor models of sear.sensors.imu sampled
on a static state, as a run samples them), their readings' overlapping Allan deviation computed here in
numpy, compared with what was configured:

- at tau = 1 s the white noise's Allan deviation is the noise density (angle / velocity random walk:
  ADEV(tau) = N / sqrt(tau)), the flicker adding its floor in quadrature: expected sqrt(N² + B²);
- the floor (where the curve is flat, tau from 20 s to a tenth of the log, the white noise's share
  taken out) is the bias instability B.

    .venv/bin/python bench/bench_allan.py [--hours 2] [--rate 100]

Prints the figures and whether each is within 10 % (not a test: two hours of samples take a minute).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from sear.gravity import STANDARD_GRAVITY
from sear.sensors.base import SensorContext
from sear.sensors.imu import AccelerometerConfig, AccelerometerSensor, GyroscopeConfig, GyroscopeSensor
from sear.sensors.suite import sensor_rng
from sear.state import VehicleState

GYRO_DENSITY_DPS = 0.005
"""°/s/√Hz: the MPU-6050's rate noise spectral density (MPU-6000/6050 Product Specification Rev 3.4)."""
GYRO_INSTABILITY_DPH = 10.0
"""°/h: a consumer MEMS gyroscope's bias instability (the MPU-6050's datasheet gives none: a typical figure)."""
ACCEL_DENSITY_UG = 150.0
"""µg/√Hz: the ADXL335's X/Y noise density (ADXL335 datasheet Rev B)."""
ACCEL_INSTABILITY_UG = 100.0
"""µg: a consumer MEMS accelerometer's bias instability (the ADXL335's datasheet gives none: a typical figure)."""


FLOOR_TAUS_S = (20.0, 720.0)
"""s: the averaging times over which the floor is read (a tenth of the two-hour log at most)."""


def allan_deviation(rates: np.ndarray, dt: float, taus: np.ndarray) -> np.ndarray:
    """Overlapping Allan deviation of a rate signal sampled every dt s, at averaging times `taus` (s)."""
    theta = np.concatenate([[0.0], np.cumsum(rates) * dt])
    out = []
    for tau in taus:
        m = round(tau / dt)
        d = theta[2 * m:] - 2.0 * theta[m:-m] + theta[:-2 * m]
        out.append(math.sqrt(np.sum(d * d) / (2.0 * (m * dt) ** 2 * len(d))))
    return np.array(out)


def simulate(sensor, samples: int, dt: float) -> np.ndarray:
    """The sensor's readings (samples, 3) lying still, level, for samples × dt seconds."""
    out = np.empty((samples, 3))
    for k in range(samples):
        state = VehicleState(time=k * dt, position=np.zeros(3), orientation=np.array([0.0, 0.0, 0.0, 1.0]),
                             linear_velocity=np.zeros(3), angular_velocity=np.zeros(3))
        sensor.sample(state, None)
        sensor.last_sample_time = state.time
        out[k] = sensor.reading
    return out


def report(name: str, unit: str, rates: np.ndarray, dt: float, density: float, floor: float) -> bool:
    """Print the figures of one sensor's three axes; whether both are within 10 %. The floor is read where
    the curve is flat, tau from FLOOR_TAUS_S: there each axis's Allan variance less the white noise's
    N²/tau (N as measured at 1 s) is the flicker's, and its median over those taus the floor (a single
    tau's estimate from two hours scatters by 10-30 % there: tau = 700 s has only ten independent
    clusters, and the curve's minimum would pick the lowest of that scatter)."""
    taus = np.geomspace(FLOOR_TAUS_S[0], FLOOR_TAUS_S[1], 12)
    ok = True
    floors = []
    for axis, label in enumerate("xyz"):
        at_1 = float(allan_deviation(rates[:, axis], dt, np.array([1.0]))[0])
        expected_1 = math.hypot(density, floor)
        adev = allan_deviation(rates[:, axis], dt, taus)
        white = (at_1 ** 2 - floor ** 2) / taus
        measured = math.sqrt(max(0.0, float(np.median(adev ** 2 - white))))
        floors.append(measured)
        e1, e2 = at_1 / expected_1 - 1.0, measured / floor - 1.0
        ok &= abs(e1) < 0.1
        print(f"{name} {label}: ADEV(1 s) = {at_1:.4g} {unit} (expected sqrt(N² + B²) = {expected_1:.4g}: {e1:+.1%}); "
              f"floor {measured:.4g} {unit} (configured {floor:.4g}: {e2:+.1%}); "
              f"ADEV at {', '.join(f'{t:.0f}' for t in taus[::3])} s: {', '.join(f'{a:.3g}' for a in adev[::3])}")
    mean = float(np.mean(floors))
    ok &= abs(mean / floor - 1.0) < 0.1
    print(f"{name}: floor, mean of the three axes {mean:.4g} {unit} "
          f"(configured {floor:.4g}: {mean / floor - 1.0:+.1%})")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hours", type=float, default=2.0)
    parser.add_argument("--rate", type=float, default=100.0, help="samples per second (the parts' bandwidth)")
    args = parser.parse_args()
    dt = 1.0 / args.rate
    samples = int(args.hours * 3600.0 * args.rate)
    rng = np.random.default_rng(2026)
    context = SensorContext()
    gyro = GyroscopeSensor(GyroscopeConfig(name="gyro", noise=True, bandwidth_hz=args.rate, output_unit="deg/s",
                                           max_range_dps=250.0, noise_density_dps_rthz=GYRO_DENSITY_DPS,
                                           bias_instability_dph=GYRO_INSTABILITY_DPH),
                           sensor_rng(rng, "gyro"), context)
    accel = AccelerometerSensor(AccelerometerConfig(name="accel", noise=True, bandwidth_hz=args.rate,
                                                    noise_density_ug_rthz=ACCEL_DENSITY_UG,
                                                    bias_instability_ug=ACCEL_INSTABILITY_UG),
                                sensor_rng(rng, "accel"), context)
    start = time.process_time()
    rates = simulate(gyro, samples, dt)
    forces = simulate(accel, samples, dt)
    forces[:, 2] -= forces[:, 2].mean()  # gravity on z: the Allan deviation ignores a constant anyway
    print(f"{args.hours:g} h at {args.rate:g} Hz: {samples} samples a sensor, simulated in "
          f"{time.process_time() - start:.1f} CPU s")
    ok = report("gyroscope", "°/s", rates, dt, GYRO_DENSITY_DPS, GYRO_INSTABILITY_DPH / 3600.0)
    g = STANDARD_GRAVITY * 1e-6
    ok &= report("accelerometer", "µg", forces / g, dt, ACCEL_DENSITY_UG, ACCEL_INSTABILITY_UG)
    print("all within 10 %" if ok else "NOT all within 10 %")


if __name__ == "__main__":
    main()
