"""The Terrain tab on a GeoTIFF elevation model (issue 29): it says the file's size, resolution and the
memory a run needs, and takes the GPS origin from the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sear.geo import utm_to_geodetic
from tests.models.geotiff import write_dem

pytestmark = pytest.mark.gl


def _type_path(field, path: Path) -> None:
    field.edit.setText(str(path))
    field.edit.editingFinished.emit()


def test_the_terrain_tab_describes_a_dem_and_takes_its_location(window, tmp_path, qtbot):
    r, c = np.mgrid[0:41, 0:61]
    z = (200.0 + 0.1 * c + 0.05 * r).astype(np.float32)
    write_dem(tmp_path / "site.tif", z, pixel=2.0, utm=(33, 400_000.0, 5_000_000.0))
    w = window
    tab = w.terrain_tab
    w.tabs.setCurrentIndex([w.tabs.tabText(i) for i in range(w.tabs.count())].index("Terrain Model"))
    assert not tab.use_file_origin.isEnabled()
    _type_path(tab.terrain_file, tmp_path / "site.tif")
    tab.update_preview()
    text = tab.file_info.text()
    assert "61 x 41 samples" in text and "pixels 2 x 2 m" in text and "120 x 80 m" in text
    assert "UTM zone 33N" in text and "MB" in text
    assert not w.field_widget("terrain.heightmap_size").isEnabled()  # the file has its own units
    assert tab.use_file_origin.isEnabled()
    tab.use_file_origin.click()
    lat, lon = utm_to_geodetic(400_000.0 + 30.5 * 2.0, 5_000_000.0 - 20.5 * 2.0, 33)
    assert w.project.terrain.latitude == pytest.approx(lat, abs=1e-6)
    assert w.project.terrain.longitude == pytest.approx(lon, abs=1e-6)
    assert w.project.terrain.altitude == pytest.approx(200.0 + 0.1 * 30 + 0.05 * 20, abs=1e-3)
    w.grab().save("/tmp/t29_terrain_tab.png") if __import__("os").environ.get("T29_SHOT") else None
