"""The formats for other tools: the ROS 2 recording decodes completely with mcap-ros2-support's reader
and carries the run's values; the live Foxglove WebSocket server delivers a LIDAR topic to a client."""

from __future__ import annotations

import csv
import json
import math
import struct
import threading
import time

import numpy as np
import pytest
import websocket
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from sear.recording.reader import Recording, RecordingError
from sear.runtime.logs import load_arrays

ROS2_TYPES = {"/tf": "tf2_msgs/msg/TFMessage", "/tf_static": "tf2_msgs/msg/TFMessage",
              "/robot/lidar": "sensor_msgs/msg/LaserScan", "/robot/gps": "sensor_msgs/msg/NavSatFix",
              "/robot/accel": "sensor_msgs/msg/Imu", "/robot/gyro": "sensor_msgs/msg/Imu",
              "/robot/front_ir": "sensor_msgs/msg/Range", "/robot/front_sonar": "sensor_msgs/msg/Range",
              "/robot/compass": "std_msgs/msg/String", "/robot/odometer": "std_msgs/msg/String",
              "/sear/log": "std_msgs/msg/String", "/sear/inputs": "std_msgs/msg/String",
              "/rosout": "rcl_interfaces/msg/Log"}


def test_ros2_recording_decodes_completely_and_carries_the_run(recorded):
    with open(recorded.ros2, "rb") as file:
        reader = make_reader(file)
        assert reader.get_header().profile == "ros2"
        summary = reader.get_summary()
        total = summary.statistics.message_count
        assert {c.message_encoding for c in summary.channels.values()} == {"cdr"}
        assert {s.encoding for s in summary.schemas.values()} == {"ros2msg"}
    decoded: dict[str, list] = {}
    with open(recorded.ros2, "rb") as file:  # the library's decoder: every message decoded, or it raises
        for schema, channel, _message, ros_msg in make_reader(
                file, decoder_factories=[DecoderFactory()]).iter_decoded_messages():
            assert schema.name == ROS2_TYPES[channel.topic]
            decoded.setdefault(channel.topic, []).append(ros_msg)
    assert sum(map(len, decoded.values())) == total and set(decoded) == set(ROS2_TYPES)

    with open(recorded.csv, newline="") as file:
        rows = list(csv.reader(file))
    header, rows = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    # the log rows, byte for byte, and the poses to the log's precision
    assert "".join(m.data for m in decoded["/sear/log"]) == recorded.csv.read_bytes().decode().split(
        "\r\n", 1)[1]
    poses = [m.transforms[0] for m in decoded["/tf"][1:]]
    assert len(poses) == len(rows)
    for pose, row in zip(poses, rows, strict=True):
        stamp = pose.header.stamp.sec + pose.header.stamp.nanosec * 1e-9
        assert abs(stamp - float(row[0])) < 1e-8 and pose.child_frame_id == "robot"
        assert pose.header.frame_id == "world"
        assert format(pose.transform.translation.x, ".9g") == row[col["truth.x"]]
        assert format(pose.transform.translation.y, ".9g") == row[col["truth.y"]]
    # the LIDAR's scans against the log's arrays (float32 both; no return: NaN there, +inf here)
    arrays = load_arrays(recorded.csv)
    scans = decoded["/robot/lidar"]
    assert len(scans) == len(arrays["lidar.time"])
    for message, expected in zip(scans, arrays["lidar.ranges"], strict=True):
        ranges = np.asarray(message.ranges, dtype=np.float32)
        np.testing.assert_array_equal(ranges, np.where(np.isnan(expected), np.float32(np.inf), expected))
        assert message.angle_min == pytest.approx(-math.pi / 2, abs=1e-6)
        assert message.range_max == pytest.approx(8.0)
    # the GPS, the accelerometer and the compass against the log's last row
    last = rows[-1]
    fix = decoded["/robot/gps"][-1]
    assert format(fix.latitude, ".10g") == last[col["gps.latitude"]]
    imu = decoded["/robot/accel"][-1]
    assert format(imu.linear_acceleration.z, ".10g") == last[col["accel.z"]]
    assert imu.orientation_covariance[0] == -1.0 and imu.angular_velocity_covariance[0] == -1.0
    compass = json.loads(decoded["/robot/compass"][-1].data)
    assert format(compass["values"]["heading"], ".10g") == last[col["compass.heading"]]
    assert decoded["/rosout"][0].msg.startswith("demo: route of") and decoded["/rosout"][0].level == 20
    with pytest.raises(RecordingError, match="ros2"):  # SEAR's reader says what the file is for
        Recording.open(recorded.ros2)


def test_foxglove_websocket_client_receives_the_lidar_at_real_time(demo_copy):
    from sear.loading import load_project
    from sear.recording.fanout import Observers
    from sear.recording.live import LiveServer
    from sear.runtime.simulation import Simulation

    class Counter:  # what the run published on the LIDAR's topic, and when the client had subscribed
        def __init__(self) -> None:
            self.subscribed: float | None = None
            self.published: list[int] = []

        def started(self, simulation): pass
        def call(self, robot, name, args): pass
        def input(self, robot, kind, args): pass
        def output(self, text, error): pass
        def closed(self, simulation): pass

        def ticked(self, simulation, result):
            if self.subscribed is not None and any(s.name == "lidar" for s in result.sampled):
                self.published.append(round(simulation.world.time * 1e9))

    server, counter = LiveServer(0), Counter()
    port = server.listen()
    simulation = Simulation(load_project(demo_copy / "demo.prj"), seed=3, observer=Observers(server, counter),
                            realtime=True, output=lambda text: None)
    client = reader = None
    received: list[tuple[int, dict]] = []
    try:
        client = websocket.create_connection(f"ws://127.0.0.1:{port}", subprotocols=["foxglove.sdk.v1"], timeout=10)
        channels: dict[str, dict] = {}
        while "/robot/lidar" not in channels:
            message = client.recv()
            if isinstance(message, str) and json.loads(message)["op"] == "advertise":
                channels.update({c["topic"]: c for c in json.loads(message)["channels"]})
        lidar = channels["/robot/lidar"]
        assert lidar["schemaName"] == "foxglove.LaserScan" and lidar["encoding"] == "json"
        client.send(json.dumps({"op": "subscribe", "subscriptions": [{"id": 7, "channelId": lidar["id"]}]}))

        def read() -> None:
            while True:
                try:
                    message = client.recv()
                except Exception:
                    return
                if isinstance(message, bytes) and message[0] == 1:  # a message data frame
                    subscription, stamp = struct.unpack_from("<IQ", message, 1)
                    if subscription == 7:
                        received.append((stamp, json.loads(message[13:])))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        time.sleep(0.2)  # the subscription reaches the server before the run publishes
        counter.subscribed = simulation.world.time
        simulation.start_user_code()
        simulation.run(2.0)
        deadline = time.monotonic() + 2.0
        while len(received) < len(counter.published) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        if client is not None:
            client.close()  # while the server is up: its close handshake
            client.shutdown()  # the socket closed whatever close() found (it returns early once the peer left)
        if reader is not None:
            reader.join(timeout=5)  # its recv() fails on the closed socket: no thread is left behind
        simulation.close()
    assert len(counter.published) >= 20  # 10 Hz for 2 s
    stamps = {stamp for stamp, _message in received}
    delivered = sum(stamp in stamps for stamp in counter.published)
    assert delivered >= 0.95 * len(counter.published), (delivered, len(counter.published))
    assert all(len(message["ranges"]) == 180 for _stamp, message in received)
