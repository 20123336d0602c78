"""SEAR demo controller: drive a square route by GPS and compass, avoiding obstacles.

The route's corners are given in metres east and north of where the robot starts; the robot converts
its GPS fixes into the same metres, steers toward the next corner with the compass, keeps its speed
with the odometer, and swerves away when the sonar or the infrared sensor sees something close.
"""

import math

# --- user variables (they keep their values between main_loop calls) ---------------------------
ROUTE = [(12.0, 0.0), (12.0, 12.0), (0.0, 12.0), (0.0, 0.0)]   # (east, north), m
CRUISE_SPEED = 1.5        # m/s
ARRIVED_WITHIN = 1.5      # m
METRES_PER_DEG_LAT = 111_000.0

waypoint = 0
laps = 0
origin = None             # first GPS fix (lat, lon)
last_odometer = None
speed = 0.0


def init(sim):
    """Runs once before the first step: place obstacles beside (not on) the route."""
    sim.add_tree(6.0, 16.0)
    sim.add_tree(17.0, 6.0)
    sim.add_box(6.0, -4.0, size=0.8, mass=10.0)
    sim.add_box(-5.0, 6.0, size=0.5, mass=2.0)
    sim.add_wall(-8.0, -6.0, -8.0, 18.0, height=0.8)
    sim.print("demo: route of", len(ROUTE), "corners; sensors:", ", ".join(sim.sensor_names))


def local_metres(fix):
    """GPS fix -> metres east and north of the first fix (flat approximation, fine over 100 m)."""
    lat0, lon0 = origin
    north = (fix.latitude - lat0) * METRES_PER_DEG_LAT
    east = (fix.longitude - lon0) * METRES_PER_DEG_LAT * math.cos(math.radians(lat0))
    return east, north


def main_loop(sim):
    """Runs every control tick (60 Hz) once user code has started."""
    global waypoint, laps, origin, last_odometer, speed
    fix = sim.read("gps")
    heading = sim.read("compass")
    odo = sim.read("odometer")
    if fix is None or heading is None or odo is None:
        return                                  # sensors not sampled yet
    if origin is None:
        origin = (fix.latitude, fix.longitude)
    if last_odometer is not None:
        speed = 0.9 * speed + 0.1 * (odo.distance - last_odometer) * 60.0
    last_odometer = odo.distance

    east, north = local_metres(fix)
    target_e, target_n = ROUTE[waypoint]
    if math.hypot(target_e - east, target_n - north) < ARRIVED_WITHIN:
        waypoint = (waypoint + 1) % len(ROUTE)
        if waypoint == 0:
            laps += 1
        sim.print(f"t={sim.time:5.1f} s: reached corner, heading for {ROUTE[waypoint]} (laps {laps})")
        return

    bearing = math.degrees(math.atan2(target_e - east, target_n - north))   # clockwise from north
    error = (bearing - heading + 180.0) % 360.0 - 180.0                      # + means target to the right
    steer = -math.radians(error) * 1.2                                        # + steers left

    sonar = sim.read("front_sonar")
    ir = sim.read("front_ir")
    if (ir is not None and ir < 0.5) or (sonar is not None and sonar < 1.2):
        steer = 0.5                                                           # swerve left around it

    sim.steer(steer)
    wanted = CRUISE_SPEED * (0.5 if abs(error) > 45 else 1.0)
    sim.accelerate(max(-20.0, min(40.0, 60.0 * (wanted - speed))))
    sim.brake(0.0)
