"""Writing small GeoTIFF elevation models for tests, with tifffile and the GeoTIFF tags spelled out here
(the GeoTIFF 1.1 specification's key ids), independently of sear.models.dem which reads them."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_dem(path: Path, heights: np.ndarray, *, pixel: float | tuple[float, float] = 1.0,
              utm: tuple[int, float, float] | None = None, geographic: tuple[float, float] | None = None,
              south: bool = False, vertical_unit: int = 9001, nodata: float | None = None,
              pixel_is_point: bool = False, compression: str | None = None) -> None:
    """`heights` (rows north to south) as a GeoTIFF: in UTM zone `utm` = (zone, easting, northing of the
    north-west corner of pixel (0, 0), m) with `pixel` m pixels, or `geographic` = (longitude, latitude of that
    corner, degrees) with `pixel` degree pixels (WGS-84); heights in `vertical_unit` (EPSG unit code)."""
    import tifffile

    sx, sy = (pixel, pixel) if not isinstance(pixel, tuple) else pixel
    keys = [1, 1, 0, 0]

    def key(k: int, value: int) -> None:
        keys.extend([k, 0, 1, value])

    if geographic is not None:
        key(1024, 2)
        key(1025, 2 if pixel_is_point else 1)
        key(2048, 4326)
        tx, ty = geographic
    else:
        key(1024, 1)
        key(1025, 2 if pixel_is_point else 1)
        zone, tx, ty = utm if utm is not None else (17, 500_000.0, 3_900_000.0)
        key(3072, (32700 if south else 32600) + zone)
        key(3076, 9001)
    key(4099, vertical_unit)
    keys[3] = (len(keys) - 4) // 4
    tags = [(33550, "d", 3, (sx, sy, 0.0), True), (33922, "d", 6, (0.0, 0.0, 0.0, tx, ty, 0.0), True),
            (34735, "H", len(keys), keys, True)]
    if nodata is not None:
        tags.append((42113, "s", 0, f"{nodata:g}", True))
    tifffile.imwrite(path, heights, extratags=tags, compression=compression)
