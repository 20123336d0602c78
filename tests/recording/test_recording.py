"""`sear run --record`: a recorded demo run read back topic by topic equals its CSV log, and every message
validates against its schema (Foxglove's, as documented, and SEAR's own)."""

from __future__ import annotations

import csv
import io
import json
import math

import jsonschema
import numpy as np
import pytest
from mcap.reader import make_reader

from sear.recording import Recording
from sear.runtime.logs import load_arrays

# Foxglove's documented required fields of each schema we write (docs.foxglove.dev, message schemas):
# written here from the documentation, not taken from the code under test.
FOXGLOVE_REQUIRED = {
    "foxglove.LaserScan": {"timestamp", "frame_id", "pose", "start_angle", "end_angle", "ranges", "intensities"},
    "foxglove.LocationFix": {"timestamp", "frame_id", "latitude", "longitude", "altitude", "position_covariance",
                             "position_covariance_type"},
    "foxglove.FrameTransforms": {"transforms"},
    "foxglove.SceneUpdate": {"deletions", "entities"},
    "foxglove.Log": {"timestamp", "level", "message", "name", "file", "line"},
    "foxglove.PointCloud": {"timestamp", "frame_id", "pose", "point_stride", "fields", "data"},
    "foxglove.RawImage": {"timestamp", "frame_id", "width", "height", "encoding", "step", "data"},
}


def _csv(path):
    with open(path, newline="") as file:
        rows = list(csv.reader(file))
    return rows[0], rows[1:]


def test_csv_topic_is_the_log_byte_for_byte(recorded):
    rec = Recording.open(recorded.mcap)
    assert rec.complete
    text = recorded.csv.read_bytes().decode()
    rows = rec.csv_rows()
    assert len(rows) == round(recorded.seconds * 60)  # the demo's control rate, 60 Hz
    assert rec.csv_header + "".join(row for _t, row in rows) == text


def test_poses_and_sensors_equal_the_log_to_its_precision(recorded):
    rec = Recording.open(recorded.mcap)
    header, rows = _csv(recorded.csv)
    column = {name: i for i, name in enumerate(header)}
    sensors = {info.name: info for info in rec.sensors()}
    assert set(sensors) >= {"lidar", "gps", "accel", "gyro", "compass", "odometer", "front_ir", "front_sonar"}
    checked = dict.fromkeys(sensors, 0)
    arrays = load_arrays(recorded.csv)
    for row in rows:
        t = float(row[0]) + 1e-7  # the log's time has 9 significant digits; the tick's is just before
        pose = rec.pose(t)
        assert pose is not None and abs(pose.time - float(row[0])) < 1e-8
        for axis, value in zip("xyz", pose.position, strict=True):
            assert format(value, ".9g") == row[column[f"truth.{axis}"]]
        # roll, pitch, yaw from the quaternion, worked out here
        qx, qy, qz, qw = pose.orientation
        yaw = math.atan2(2 * (qw * qz + qx * qy), 1 - 2 * (qy * qy + qz * qz))
        assert yaw == pytest.approx(float(row[column["truth.yaw"]]), abs=2e-8)
        for name, info in sensors.items():
            sample = rec.sensor_value(t, None, name)
            cells = [row[column[f"{name}.{field}"]] for field in info.fields]
            if sample is None:
                assert all(cell == "" for cell in cells)
                continue
            checked[name] += 1
            if info.type == "lidar":
                returns = sample.array[~np.isnan(sample.array)]
                assert cells[0] == ("" if returns.size == 0 else format(float(returns.min()), ".10g"))
                index = int(np.argmin(np.abs(arrays["lidar.time"] - sample.time)))
                assert arrays["lidar.time"][index] == pytest.approx(sample.time, abs=1e-9)
                np.testing.assert_array_equal(sample.array.astype(np.float32), arrays["lidar.ranges"][index])
                continue
            for field, cell in zip(info.fields, cells, strict=True):
                value = sample.values[field]
                if value is None:
                    assert cell == ""
                elif isinstance(value, bool):
                    assert cell == ("1" if value else "0")
                elif isinstance(value, int):
                    assert cell == str(value)
                else:
                    assert cell == format(value, ".10g")
    for name in ("lidar", "gps", "accel", "gyro", "compass", "odometer"):
        assert checked[name] >= len(rows) - 60, name  # every sensor sampled within the first second


def test_every_message_validates_against_its_schema(recorded):
    schemas_seen, counts = {}, {}
    with open(recorded.mcap, "rb") as file:
        reader = make_reader(file)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics.message_count > 0
        for schema, channel, message in reader.iter_messages():
            assert schema.encoding == "jsonschema" and channel.message_encoding == "json"
            document = json.loads(schema.data)
            assert document["title"] == schema.name
            validator = schemas_seen.get(schema.name)
            if validator is None:
                jsonschema.Draft7Validator.check_schema(document)
                validator = schemas_seen[schema.name] = jsonschema.Draft7Validator(document)
                required = FOXGLOVE_REQUIRED.get(schema.name)
                if required is not None:
                    assert set(document["required"]) == required, schema.name
            validator.validate(json.loads(message.data))
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
    assert set(FOXGLOVE_REQUIRED) - {"foxglove.PointCloud", "foxglove.RawImage"} <= set(schemas_seen)
    assert {"sear.SensorReading", "sear.LogRow", "sear.Input"} <= set(schemas_seen)
    assert counts["/robot/lidar"] == round(recorded.seconds * 10) + 1  # 10 Hz, from t = 0
    assert sum(counts.values()) == summary.statistics.message_count


def test_a_schema_rejects_what_breaks_it():
    """Positive control for the validation above: a LaserScan without ranges or with text in them fails."""
    from sear.recording.schemas import LASER_SCAN

    good = {"timestamp": {"sec": 1, "nsec": 0}, "frame_id": "f", "start_angle": 0.0, "end_angle": 1.0,
            "pose": {"position": {"x": 0, "y": 0, "z": 0}, "orientation": {"x": 0, "y": 0, "z": 0, "w": 1}},
            "ranges": [1.0], "intensities": []}
    jsonschema.validate(good, LASER_SCAN)
    for broken in ({k: v for k, v in good.items() if k != "ranges"}, {**good, "ranges": ["far"]},
                   {**good, "timestamp": {"sec": 1, "nsec": 10**9}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, LASER_SCAN)


def test_recording_embeds_the_project_and_its_inputs(recorded):
    rec = Recording.open(recorded.mcap)
    folder = recorded.project.parent
    assert rec.project_file == "demo.prj"
    for name, data in rec.files.items():
        assert (folder / name).read_bytes() == data
    assert {"demo.prj", "demo_code.py", "sensors.xml", "terrain.obj"} <= set(rec.files)
    assert rec.seed == 3 and rec.physics_hz == 240.0 and rec.control_hz == 60.0
    kinds = {(item.kind, item.name) for item in rec.inputs()}
    assert ("call", "add_tree") in kinds and ("call", "accelerate") in kinds and ("manual", "manual") in kinds
    manual = [item for item in rec.inputs() if item.kind == "manual"]
    assert manual[0].args == [1.0, 0.6, False] and 0.9 <= manual[0].time < 0.9 + 1 / 60
    prints = rec.prints()
    assert prints and prints[0].text.startswith("demo: route of")
    scene = rec.scene()
    ids = [entity["id"] for _t, update in scene for entity in update["entities"]]
    assert ids[0] == "terrain" and sum(i.startswith("obstacle/") for i in ids) >= 4  # 2 trees + 2 boxes
    assert "robot/robot" in ids  # the body, locked to the robot's frame
    with io.BytesIO(rec.files["demo.prj"]) as prj:
        assert b"<physics_hz>240" in prj.read()


def test_record_path_never_overwrites_the_project(demo_copy):
    from sear.errors import ProjectError
    from sear.project import Project
    from sear.recording.writer import check_record_path

    project = Project.load(demo_copy / "demo.prj")
    for victim in ("demo.prj", "demo_code.py", "terrain.obj"):
        with pytest.raises(ProjectError, match="overwrite one of the project's files"):
            check_record_path(demo_copy / victim, project)
    assert check_record_path(demo_copy / "new.mcap", project) == demo_copy / "new.mcap"
    (demo_copy / "old.mcap").write_bytes(b"x")
    with pytest.raises(ProjectError, match="--force"):
        check_record_path(demo_copy / "old.mcap", project)
    assert check_record_path(demo_copy / "old.mcap", project, force=True)


def test_a_full_disk_stops_the_recording_not_the_run(demo_copy, tmp_path):
    """A write of the recording fails (the disk fills up 10 kB after its start): the recording stops with a sentence,
    the run goes on to its end, and the file reads back up to its last whole chunk."""
    import errno

    from mcap.writer import CompressionType, IndexType

    from sear.loading import load_project
    from sear.recording.mcapwriter import FastWriter
    from sear.recording.writer import Recorder
    from sear.runtime.simulation import Simulation

    class FillingDisk(io.RawIOBase):
        def __init__(self, path, room):
            self.file, self.room = open(path, "wb"), room  # noqa: SIM115

        def writable(self):
            return True

        def seekable(self):
            return True

        def tell(self):
            return self.file.tell()

        def seek(self, offset, whence=0):
            return self.file.seek(offset, whence)

        def write(self, data):
            if len(data) > self.room:
                taken = self.file.write(bytes(data[:self.room]))
                self.room = 0
                self.file.flush()
                if taken:
                    return taken
                raise OSError(errno.ENOSPC, "No space left on device")
            self.room -= len(data)
            return self.file.write(bytes(data))

        def close(self):
            self.file.close()
            super().close()

    class Recording_(Recorder):
        def _open(self):
            self._file = FillingDisk(self.path, 1 << 40)
            return FastWriter(self._file, compression=CompressionType.ZSTD, chunk_size=4 << 20,
                              index_types=IndexType.CHUNK | IndexType.ATTACHMENT | IndexType.METADATA)

    said = []
    recorder = Recording_(tmp_path / "full.mcap")
    simulation = Simulation(load_project(demo_copy / "demo.prj"), seed=1, observer=recorder, user_code=False,
                            output=said.append)
    recorder._file.room = 10_000  # the project and the scene are written: 10 kB more fit
    try:
        for _ in range(288):  # 1.2 s, keyboard driving
            simulation.set_manual_input(1.0, 0.0, False)
            simulation.tick()
        assert simulation.world.time == pytest.approx(1.2)
    finally:
        simulation.close()
    assert recorder.failure is not None and "No space left on device" in recorder.failure
    assert any("the recording could not be written" in text for text in said)
    rec = Recording.open(tmp_path / "full.mcap")
    assert not rec.complete and 0.0 <= rec.duration < 1.0 and rec.scene()
    assert rec.files["demo.prj"] == (demo_copy / "demo.prj").read_bytes()
