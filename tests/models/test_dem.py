"""GeoTIFF elevation models as terrain (issue 29): real units and pixel sizes, where on Earth they lie, and
clear messages for files SEAR cannot use. The files are written here (tests/models/geotiff.py); expected
positions come from independent formulas (geographiclib's geodesics, the UTM forward series)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tifffile
from geographiclib.geodesic import Geodesic

from sear.errors import ProjectError
from sear.models.dem import read_info
from sear.models.heightgrid import MESH_UP_TO_SAMPLES
from sear.models.meshfiles import load_terrain
from sear.project import Terrain

from .geotiff import write_dem


def utm_forward(lat: float, lon: float, zone: int) -> tuple[float, float]:
    """Easting, northing (m) of a WGS-84 point in UTM `zone` north: Krüger's forward series (Wikipedia's
    "Universal Transverse Mercator coordinate system"), the direction SEAR does not compute."""
    a, f = 6378137.0, 1 / 298.257223563
    n = f / (2 - f)
    big_a = a / (1 + n) * (1 + n ** 2 / 4 + n ** 4 / 64)
    alpha = (n / 2 - 2 / 3 * n ** 2 + 5 / 16 * n ** 3, 13 / 48 * n ** 2 - 3 / 5 * n ** 3, 61 / 240 * n ** 3)
    phi, lam = math.radians(lat), math.radians(lon - (zone * 6 - 183))
    k = 2 * math.sqrt(n) / (1 + n)
    t = math.sinh(math.atanh(math.sin(phi)) - k * math.atanh(k * math.sin(phi)))
    xi_p, eta_p = math.atan2(t, math.cos(lam)), math.atanh(math.sin(lam) / math.sqrt(1 + t * t))
    e = 500000 + 0.9996 * big_a * (eta_p + sum(al * math.cos(2 * j * xi_p) * math.sinh(2 * j * eta_p)
                                              for j, al in enumerate(alpha, 1)))
    nn = 0.9996 * big_a * (xi_p + sum(al * math.sin(2 * j * xi_p) * math.cosh(2 * j * eta_p)
                                      for j, al in enumerate(alpha, 1)))
    return e, nn


def ramp(rows: int, cols: int, base: float = 300.0) -> np.ndarray:
    r, c = np.mgrid[0:rows, 0:cols]
    return (base + 0.25 * c - 0.5 * r).astype(np.float32)


def test_a_utm_dem_has_its_pixel_size_its_heights_and_the_latitude_longitude_of_its_centre(tmp_path):
    rows, cols, pixel = 41, 61, 2.0
    lat, lon = 35.3, -80.7  # zone 17
    e, n = utm_forward(lat, lon, 17)
    # north-west corner of pixel (0, 0) such that the centre sample (row 20, column 30) lies at (e, n)
    corner = (e - 30.5 * pixel, n + 20.5 * pixel)
    z = ramp(rows, cols)
    write_dem(tmp_path / "utm.tif", z, pixel=pixel, utm=(17, *corner))
    model = load_terrain(Terrain(file=tmp_path / "utm.tif"))
    grid = model.grid
    assert grid is not None and (grid.dx, grid.dy) == (pixel, pixel)
    assert model.bounds[:, :2].tolist() == [[-60.0, -40.0], [60.0, 40.0]]
    # heights in metres as stored: column 30 east of the centre rises 0.25 m a pixel
    assert grid.heights_at(np.array([[2.0 * 10, 0.0]]))[0] == pytest.approx(300.0 + 0.25 * 40 - 0.5 * 20, abs=1e-4)
    assert model.mesh is not None and model.mesh.vertices[:, 2].max() == pytest.approx(z.max())
    assert model.geo_origin is not None
    assert model.geo_origin[0] == pytest.approx(lat, abs=1e-8) and model.geo_origin[1] == pytest.approx(lon, abs=1e-8)
    assert model.geo_origin[2] == pytest.approx(float(z[20, 30]), abs=1e-4)
    assert "UTM zone 17N" in model.info and "61 x 41" in model.info and "MB" in model.info


def test_a_geographic_dem_gets_its_pixels_in_metres_at_its_latitude(tmp_path):
    deg = 1.0 / 3600.0  # one arc-second, as SRTM
    write_dem(tmp_path / "geo.tif", ramp(31, 31), pixel=deg, geographic=(-80.7, 35.3))
    info = read_info(tmp_path / "geo.tif")
    centre_lat, centre_lon = 35.3 - 15.5 * deg, -80.7 + 15.5 * deg
    assert info.origin == pytest.approx((centre_lat, centre_lon), abs=1e-12)
    east = Geodesic.WGS84.Inverse(centre_lat, centre_lon, centre_lat, centre_lon + deg)["s12"]
    north = Geodesic.WGS84.Inverse(centre_lat - deg / 2, centre_lon, centre_lat + deg / 2, centre_lon)["s12"]
    assert info.dx == pytest.approx(east, rel=1e-6) and info.dy == pytest.approx(north, rel=1e-6)
    assert info.crs == "geographic WGS-84"


def test_heights_in_feet_become_metres_and_pixel_is_point_is_honoured(tmp_path):
    z = ramp(5, 5, base=1000.0)
    write_dem(tmp_path / "ft.tif", z, pixel=3.0, vertical_unit=9002, utm=(17, 500_000.0, 3_900_000.0),
              pixel_is_point=True)
    model = load_terrain(Terrain(file=tmp_path / "ft.tif"))
    assert model.grid is not None
    assert np.allclose(model.grid.heights, z * 0.3048, rtol=1e-6)
    info = read_info(tmp_path / "ft.tif")
    assert info.z_unit == "feet"
    # pixel is point: the tie point is the sample itself, the centre sample (2, 2) is 6 m east/south of it
    e0, n0 = 500_000.0 + 6.0, 3_900_000.0 - 6.0
    from sear.geo import utm_to_geodetic

    assert info.origin == pytest.approx(utm_to_geodetic(e0, n0, 17), abs=1e-12)
    lat, lon = info.origin
    assert utm_forward(lat, lon, 17) == pytest.approx((e0, n0), abs=1e-3)


def test_a_large_dem_is_a_grid_without_a_mesh(tmp_path):
    side = math.isqrt(MESH_UP_TO_SAMPLES) + 1
    write_dem(tmp_path / "big.tif", ramp(side, side), pixel=1.0)
    model = load_terrain(Terrain(file=tmp_path / "big.tif"))
    assert model.mesh is None and model.grid is not None and model.grid.heights.shape == (side, side)
    assert model.bounds[1, 0] - model.bounds[0, 0] == pytest.approx(side - 1.0)


def test_bad_dems_get_clear_messages(tmp_path):
    z = ramp(8, 8)
    holes = z.copy()
    holes[3, 4] = -9999.0
    write_dem(tmp_path / "holes.tif", holes, nodata=-9999.0)
    with pytest.raises(ProjectError, match=r"1 pixels without data .*row 3, column 4.*gdal_fillnodata") as info:
        load_terrain(Terrain(file=tmp_path / "holes.tif"))
    assert info.value.field == "Terrain Model" and info.value.file == tmp_path / "holes.tif"
    nan = z.copy()
    nan[0, 0] = np.nan
    write_dem(tmp_path / "nan.tif", nan)
    with pytest.raises(ProjectError, match="without data"):
        load_terrain(Terrain(file=tmp_path / "nan.tif"))
    write_dem(tmp_path / "lzw.tif", z)
    with tifffile.TiffFile(tmp_path / "lzw.tif", mode="r+b") as tif:  # say LZW: tifffile needs imagecodecs for it
        tif.pages.first.tags["Compression"].overwrite(5)
    try:
        import imagecodecs  # noqa: F401
    except ImportError:
        with pytest.raises(ProjectError, match=r"compressed with LZW.*imagecodecs.*COMPRESS=DEFLATE"):
            load_terrain(Terrain(file=tmp_path / "lzw.tif"))
    write_dem(tmp_path / "deflate.tif", z, compression="zlib")  # positive control: Deflate reads
    assert np.array_equal(load_terrain(Terrain(file=tmp_path / "deflate.tif")).grid.heights, z)
    write_dem(tmp_path / "rgb.tif", np.zeros((8, 8, 3), np.uint8))
    with pytest.raises(ProjectError, match="not an elevation model"):
        load_terrain(Terrain(file=tmp_path / "rgb.tif"))
    tifffile.imwrite(tmp_path / "nogeo.tif", z, extratags=[(33550, "d", 3, (1.0, 1.0, 0.0), True)])
    with pytest.raises(ProjectError, match="no tie point"):
        load_terrain(Terrain(file=tmp_path / "nogeo.tif"))


def test_a_large_heightmap_image_is_a_float32_grid_in_metres(tmp_path):
    from PIL import Image

    side = math.isqrt(MESH_UP_TO_SAMPLES) + 1
    pixels = (np.arange(side * side, dtype=np.uint32) % 65536).astype(np.uint16).reshape(side, side)
    Image.fromarray(pixels).save(tmp_path / "big.png")
    model = load_terrain(Terrain(file=tmp_path / "big.png", heightmap_size=257.0, heightmap_height=20.0))
    assert model.mesh is None and model.grid is not None and model.grid.heights.dtype == np.float32
    assert np.allclose(model.grid.heights, pixels / 65535.0 * 20.0, atol=1e-5)
    assert model.grid.dx == model.grid.dy == pytest.approx(257.0 / (side - 1))
    assert f"{side} x {side} pixels" in model.info
