"""DC gearmotors from their datasheets: the linear torque-speed line of a brushed DC motor, and presets.

A brushed DC motor with winding resistance R (Ω), torque constant kt (N·m/A) and back-EMF constant ke
(V·s/rad) at voltage V gives the torque τ = kt·(V − ke·ω)/R at shaft speed ω (rad/s): a straight line from
the stall torque T_s = kt·V/R at ω = 0 down to nothing at the no-load speed ω_0 = V/ke. A datasheet gives
the line's two ends at the rated voltage V_r; both scale with the voltage, so at a supply voltage V_s and
a duty d (−1 to 1, the share of the supply a PWM driver passes on):

    τ(ω) = T_s·(V_s/V_r)·d − (T_s/ω_0)·ω

(Hughes & Drury, Electric Motors and Drives, 4th ed., ch. 3: the steady-state DC motor; the no-load
current and the winding inductance, milliseconds, are left out). A gearmotor's datasheet gives T_s and
ω_0 at its output shaft, its own gearbox included. A further reduction G between that shaft and the wheel
(a belt, a second gearbox; the shaft turns G times per wheel turn) with efficiency η gives the wheel

    τ_w(ω_w) = η·G·τ(G·ω_w) = T_ws·(d − ω_w/ω_w0),   T_ws = η·G·T_s·V_s/V_r,   ω_w0 = ω_0·V_s/(V_r·G)

and pushes the ground with τ_w / r at wheel radius r. Units: N·m, rad/s, V, m, N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from sear.errors import ProjectError

KG_MM = 9.80665e-3
"""N·m in one kg·mm (kgf·mm), the unit of Pololu's datasheet torques."""
OZ_IN = 7.061552e-3
"""N·m in one oz·in (ozf·in)."""
RPM = 2.0 * math.pi / 60.0
"""rad/s in one revolution per minute."""


@dataclass(frozen=True)
class GearMotor:
    """A DC gearmotor driving one wheel, as its datasheet and the drive train give it (SI units)."""

    stall_torque: float
    """N·m at the gearmotor's output shaft at `rated_voltage`, held still (the stall extrapolation)."""
    no_load_speed: float
    """rad/s of the output shaft at `rated_voltage` with no load."""
    rated_voltage: float
    """V: the voltage the datasheet's two figures are for."""
    supply_voltage: float
    """V: the battery or supply voltage the motor driver switches (full duty)."""
    gear_ratio: float = 1.0
    """Turns of the output shaft per turn of the wheel (1: the wheel sits on the shaft)."""
    efficiency: float = 1.0
    """Efficiency of that further reduction, 0 to 1 (the gearmotor's own gearbox is in its figures)."""

    @classmethod
    def from_constants(cls, *, kt: float, ke: float, resistance: float, voltage: float, internal_ratio: float = 1.0,
                       internal_efficiency: float = 1.0, **drive_train: float) -> GearMotor:
        """A motor from its constants: kt (N·m/A), ke (V·s/rad), winding resistance (Ω) at the rated
        `voltage` (V), behind its own gearbox of `internal_ratio` and `internal_efficiency`: stall torque
        η·N·kt·V/R, no-load speed V/(ke·N). `drive_train`: supply_voltage (default `voltage`), gear_ratio,
        efficiency."""
        drive_train.setdefault("supply_voltage", voltage)
        return cls(stall_torque=internal_efficiency * internal_ratio * kt * voltage / resistance,
                   no_load_speed=voltage / (ke * internal_ratio), rated_voltage=voltage, **drive_train)

    @property
    def wheel_stall_torque(self) -> float:
        """N·m at the wheel at full duty, held still: η·G·T_s·V_s/V_r."""
        return self.efficiency * self.gear_ratio * self.stall_torque * self.supply_voltage / self.rated_voltage

    @property
    def wheel_no_load_speed(self) -> float:
        """rad/s of the wheel at full duty with no load: ω_0·V_s/(V_r·G)."""
        return self.no_load_speed * self.supply_voltage / (self.rated_voltage * self.gear_ratio)

    def wheel_torque(self, duty: float, wheel_speed: float) -> float:
        """N·m the motor turns the wheel with at `duty` (clamped to −1..1) while the wheel turns at
        `wheel_speed` rad/s (positive forward): T_ws·(d − ω_w/ω_w0). Beyond the no-load speed for the duty it
        brakes (a motor driven by its load generates into its driver)."""
        duty = max(-1.0, min(1.0, duty))
        return self.wheel_stall_torque * (duty - wheel_speed / self.wheel_no_load_speed)


def motor_of(dynamics: Any) -> GearMotor | None:
    """The motor a robot's Vehicle Dynamics fields describe (sear.project.Dynamics' motor_* fields: its stall torque
    and no-load speed, or its constants kt, ke and R; with the rated voltage and the drive train), or None
    when they give none. ProjectError naming the field when they give only part of one (`motor_problem`;
    loading a project reports it as a problem before any robot is built)."""
    problem = motor_problem(dynamics)
    if problem is not None:
        raise ProjectError(problem[0], field=problem[1])
    if dynamics.motor_rated_voltage is None:
        return None
    rated = dynamics.motor_rated_voltage
    supply = dynamics.motor_supply_voltage if dynamics.motor_supply_voltage is not None else rated
    train = {"supply_voltage": supply,
             "gear_ratio": dynamics.motor_gear_ratio if dynamics.motor_gear_ratio is not None else 1.0,
             "efficiency": dynamics.motor_efficiency if dynamics.motor_efficiency is not None else 1.0}
    if dynamics.motor_torque_constant is not None:
        return GearMotor.from_constants(kt=dynamics.motor_torque_constant, ke=dynamics.motor_back_emf_constant,
                                        resistance=dynamics.motor_resistance, voltage=rated, **train)
    return GearMotor(stall_torque=dynamics.motor_stall_torque, no_load_speed=dynamics.motor_no_load_speed,
                     rated_voltage=rated, **train)


def motor_problem(dynamics: Any, prefix: str = "dynamics") -> tuple[str, str] | None:
    """Why the motor_* fields of `dynamics` describe no motor that can run, as (message, field under
    `prefix`); None when they are fine (a whole motor, or none at all). Each field's own bounds (positive,
    efficiency at most 1) are checked with the field; this checks that they go together."""
    given = {name: getattr(dynamics, name) is not None for name in MOTOR_FIELDS}
    if not any(given.values()):
        return None
    curve = any(given[name] for name in CURVE_FIELDS)
    constants = any(given[name] for name in CONSTANT_FIELDS)
    if curve and constants:
        name = next(name for name in CONSTANT_FIELDS if given[name])
        return ("the motor is given both by its stall torque and no-load speed and by its constants (kt, ke, R): "
                "keep one of the two (the constants give stall torque kt·V/R and no-load speed V/ke).",
                f"{prefix}.{name}")
    needed = (*CONSTANT_FIELDS, "motor_rated_voltage") if constants else (*CURVE_FIELDS, "motor_rated_voltage")
    for name in needed:
        if not given[name]:
            return (f"the motor's {FIGURE_NAMES[name]} is missing: a motor needs its stall torque, no-load speed "
                    "and rated voltage from its datasheet, or its torque constant, back-EMF constant, resistance "
                    "and rated voltage (or leave every motor field empty for plain drive forces).",
                    f"{prefix}.{name}")
    return None


CURVE_FIELDS = ("motor_stall_torque", "motor_no_load_speed")
"""A motor's torque-speed line by its two ends (with the rated voltage)."""
CONSTANT_FIELDS = ("motor_torque_constant", "motor_back_emf_constant", "motor_resistance")
"""The same line by the motor's constants (with the rated voltage): T_s = kt·V/R, ω_0 = V/ke."""
FIGURE_NAMES = {"motor_stall_torque": "stall torque", "motor_no_load_speed": "no-load speed",
                "motor_rated_voltage": "rated voltage", "motor_torque_constant": "torque constant (kt)",
                "motor_back_emf_constant": "back-EMF constant (ke)", "motor_resistance": "winding resistance"}


MOTOR_FIELDS = ("motor_stall_torque", "motor_no_load_speed", "motor_rated_voltage", "motor_torque_constant",
                "motor_back_emf_constant", "motor_resistance", "motor_supply_voltage", "motor_gear_ratio",
                "motor_efficiency")
"""The Vehicle Dynamics fields that describe a robot's wheel motors (sear.project.Dynamics)."""


@dataclass(frozen=True)
class Preset:
    """A gearmotor's datasheet figures (SI) and where they come from."""

    name: str
    """Manufacturer and model, as the settings window lists it."""
    stall_torque: float
    """N·m at the output shaft at the rated voltage."""
    no_load_speed: float
    """rad/s at the output shaft at the rated voltage."""
    rated_voltage: float
    """V."""
    source: str
    """The datasheet or product page the figures are from, and the figures in its units."""


def _pololu_37d(ratio: str, items: str, rpm: int, kg_mm: int) -> Preset:
    """A 12 V Pololu 37D gearmotor from the performance summary of its datasheet (every 12 V version's stall
    extrapolation draws 5.5 A)."""
    return Preset(f"Pololu 37D {ratio} metal gearmotor 12V (items {items})", kg_mm * KG_MM, rpm * RPM, 12.0,
                  f"Pololu 37D Metal Gearmotors datasheet, Rev 1.2 (pololu.com), performance summary: {rpm} RPM "
                  f"no load, stall extrapolation {kg_mm} kg·mm, 5.5 A, at 12 V")


PRESETS: tuple[Preset, ...] = (
    _pololu_37d("30:1", "#4742, #4752", 330, 140),
    _pololu_37d("50:1", "#4743, #4753", 200, 210),
    Preset("Pololu 75:1 micro metal gearmotor HPCB 12V (item #5215)", 10 * KG_MM, 450 * RPM, 12.0,
           "https://www.pololu.com/product/5215: 450 RPM, 80 mA no load; stall extrapolation 1.0 kg·cm "
           "(13 oz·in), 0.75 A, at 12 V"),
    Preset("Pololu 120:1 mini plastic gearmotor HP", 25 * OZ_IN, 150 * RPM, 4.5,
           "https://robotgear.com.au/Product.aspx/Details/3746 (Pololu's table): 150 RPM no load, stall "
           "torque 25 oz·in, 1250 mA, at 4.5 V"),
)
"""Gearmotors common on small robots, with their datasheet figures at their rated voltage."""
