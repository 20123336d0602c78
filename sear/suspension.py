"""The raycast suspension's fields in physical terms: natural frequency, damping ratio, static sag.

What the fields mean (sear.physics.tyre, after Bullet's btRaycastVehicle): a wheel in contact pushes
with N = (stiffness · compression length − damping · closing speed) · M, M the chassis mass in kg. So a
wheel's spring is k = stiffness · M (N/m) and its damper c = damping · M (N·s/m): both fields are per kg
of the *whole* chassis, whatever share of it the wheel carries. With n wheels carrying the chassis
(n = 4) the chassis bouncing straight up and down (heave) is a mass M on a spring n·k and a damper n·c:

    ω_n = sqrt(n · stiffness)             (rad/s)
    ζ   = n·c / (2·sqrt(n·k·M)) = damping · sqrt(n) / (2 · sqrt(stiffness))
                                            (= damping / sqrt(stiffness) with four wheels)
    sag = M·g / (n·k) = g / (n · stiffness)   (m; independent of the mass)

(any second-order oscillator, e.g. Gillespie, Fundamentals of Vehicle Dynamics, ch. 5, or Rao,
Mechanical Vibrations, §2.6). Pitch and roll are damped more than heave (their ratio grows with the
wheels' spread against the chassis' inertia), so heave's ζ is the one that tells whether a robot rings.
Bullet's own comment ("k · 2 · sqrt(stiffness) is k times critical damping") treats a wheel as if it
carried the whole chassis, n = 1: by the force law above, that is half the damping ratio four wheels
give, so the thesis's 0.3 with stiffness 120 is ζ ≈ 0.027 (not Bullet's 0.014) — still far below a
road vehicle's 0.2-0.5 (Gillespie ch. 5; Milliken & Milliken ch. 16).
"""

from __future__ import annotations

import math

from sear.gravity import GRAVITY

WHEELS = 4
"""Wheels carrying the chassis."""
LOW_DAMPING_RATIO = 0.1
"""Below this damping ratio a robot rings for many bounces after every bump (the settings window warns)."""


def damping_ratio(coefficient: float, stiffness: float, wheels: int = WHEELS) -> float:
    """ζ (dimensionless) of the chassis' heave with every wheel's damper `coefficient` (1/s, per kg of
    chassis mass) on springs of `stiffness` (1/s², per kg): coefficient · sqrt(wheels) / (2 sqrt(stiffness))."""
    return coefficient * math.sqrt(wheels) / (2.0 * math.sqrt(stiffness))


def damping_coefficient(ratio: float, stiffness: float, wheels: int = WHEELS) -> float:
    """The damper coefficient (1/s, per kg of chassis mass) that gives heave the damping ratio `ratio`
    on springs of `stiffness` (1/s², per kg): the inverse of damping_ratio."""
    return ratio * 2.0 * math.sqrt(stiffness) / math.sqrt(wheels)


def natural_frequency(stiffness: float, wheels: int = WHEELS) -> float:
    """Undamped heave frequency ω_n, rad/s, of a chassis on `wheels` springs of `stiffness` (1/s², per kg)."""
    return math.sqrt(wheels * stiffness)


def static_sag(stiffness: float, wheels: int = WHEELS, gravity: float = GRAVITY) -> float:
    """How far the springs are compressed by the chassis' weight on level ground, m: g / (wheels · stiffness)."""
    return gravity / (wheels * stiffness)
