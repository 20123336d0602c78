"""Digital elevation models (GeoTIFF) as terrain: heights in metres on a grid of known pixel size, and where
on Earth the grid lies when the file says so.

tifffile decodes the TIFF (strips or tiles; uncompressed, Deflate or LZMA, and LZW, PackBits, ... when the
optional package imagecodecs is installed); the GeoTIFF tags are read here:

- ModelPixelScale (33550) and ModelTiepoint (33922), or a ModelTransformation (34264) without rotation:
  the pixel size and where pixel (0, 0) lies;
- the GeoKey directory (34735, with its doubles 34736 and text 34737): GTModelType (geographic or
  projected), GTRasterType (pixel is area or point), GeographicType (4326: WGS-84), ProjectedCSType
  (32601-32660 / 32701-32760: WGS-84 / UTM zone north / south), ProjLinearUnits and VerticalUnits
  (metres, feet, US survey feet);
- GDAL_NODATA (42113): the value of pixels without data.

Heights become metres above the vertical datum of the file. The grid is placed as it is, flat: columns
east, rows south, in metres (a geographic grid's degrees become metres at its centre latitude). When the
file is geographic WGS-84 or a WGS-84 UTM zone, `Dem.origin` is the latitude and longitude of the grid's
centre and its height there, which can be the project's GPS origin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sear.errors import ProjectError
from sear.geo import WGS84_A, WGS84_E2, utm_to_geodetic

GEOTIFF_TAGS = (33550, 33922, 34264, 34735)
"""Tags whose presence makes a TIFF a geo-referenced DEM rather than a grey heightmap image."""
_UNITS = {9001: (1.0, "metres"), 9002: (0.3048, "feet"), 9003: (1200.0 / 3937.0, "US survey feet"),
          9030: (1852.0, "nautical miles"), 9036: (1000.0, "kilometres")}
_DTYPES = {"u1", "u2", "u4", "i1", "i2", "i4", "f4", "f8"}
BYTES_PER_SAMPLE = 4
"""A height grid keeps each sample as a float32 (sear.models.heightgrid)."""
BYTES_PER_TILE_TRIANGLE = 430
"""pybullet's memory per triangle of a collision mesh (Bullet's triangle BVH), measured."""


@dataclass
class DemInfo:
    """What a GeoTIFF's header says (read without its pixels): for the Terrain tab and `read_dem`."""

    cols: int
    rows: int
    dtype: str
    """numpy's name of the samples' type ('int16', 'float32', ...)."""
    compression: str
    dx: float
    """Pixel size along a row (east), m."""
    dy: float
    """Pixel size along a column (north), m."""
    z_scale: float
    """Metres per unit of the stored heights."""
    z_unit: str
    crs: str
    """What the grid's coordinates are, in words ('WGS-84 / UTM zone 17N', 'geographic WGS-84', ...)."""
    origin: tuple[float, float] | None
    """Latitude, longitude (decimal degrees) of the grid's centre when it is WGS-84 geographic or UTM."""
    nodata: float | None
    file_bytes: int

    def summary(self) -> str:
        """One paragraph: size, resolution, coordinates and the memory a run needs (`memory_estimate`)."""
        width, height = (self.cols - 1) * self.dx, (self.rows - 1) * self.dy
        where = (f"; centre {self.origin[0]:.6f}°, {self.origin[1]:.6f}°" if self.origin is not None else "")
        return (f"GeoTIFF DEM, {self.cols} x {self.rows} samples ({self.dtype}, {self.compression}, "
                f"{self.file_bytes / 1e6:.1f} MB on disk); pixels {self.dx:.3g} x {self.dy:.3g} m, "
                f"{width:,.0f} x {height:,.0f} m; heights in {self.z_unit}; {self.crs}{where}. "
                f"A run needs about {memory_estimate(self.rows, self.cols, max(self.dx, self.dy)) / 1e6:,.0f} MB "
                "for it.")


def memory_estimate(rows: int, cols: int, pixel: float = 1.0) -> int:
    """Bytes a run needs for a rows x cols height grid of `pixel` m samples (docs/terrain.md). A grid of at
    most MESH_UP_TO_SAMPLES samples is one mesh: ~620 bytes a triangle (pybullet 430, the ray engine's
    Embree 85, the mesh itself ~100). A larger one is paged: 4 bytes a sample (the grid), plus the
    collision tiles around each robot (128² cells, 2 triangles a cell, 430 bytes a triangle; the tiles
    within 10 m of it, ⌈20 m / tile + 1⌉² of them), plus the 3-D window's levels of detail (~20 MB)."""
    from sear.models.heightgrid import MESH_UP_TO_SAMPLES

    triangles = 2 * (rows - 1) * (cols - 1)
    if rows * cols <= MESH_UP_TO_SAMPLES:
        return triangles * 620
    tile = 128 * pixel
    tiles = min(math.ceil(20.0 / tile + 1.0) ** 2, math.ceil((rows - 1) / 128) * math.ceil((cols - 1) / 128))
    return rows * cols * BYTES_PER_SAMPLE + tiles * 2 * 128 * 128 * BYTES_PER_TILE_TRIANGLE + 20_000_000


def is_geotiff(path: Path) -> bool:
    """True when `path` is a TIFF with GeoTIFF tags (read as a DEM); False for a plain image or a file
    tifffile cannot open (the heightmap reader then says what is wrong)."""
    import tifffile

    try:
        with tifffile.TiffFile(path) as tif:
            tags = tif.pages.first.tags
            return any(code in tags for code in GEOTIFF_TAGS)
    except Exception:  # not a TIFF tifffile knows: the image reader says what is wrong with it
        return False


def _fail(path: Path, tab: str, sentence: str) -> ProjectError:
    return ProjectError(sentence, file=path, field=tab or None)


def _geokeys(tags: Any) -> dict[int, Any]:
    """The GeoKey directory as {key id: value} (numbers, tuples of doubles, or text)."""
    if 34735 not in tags:
        return {}
    directory = [int(v) for v in tags[34735].value]
    doubles = tuple(float(v) for v in tags[34736].value) if 34736 in tags else ()
    text = str(tags[34737].value) if 34737 in tags else ""
    keys: dict[int, Any] = {}
    for k in range(directory[3]):
        key, location, count, offset = directory[4 + 4 * k:8 + 4 * k]
        if location == 0:
            keys[key] = offset
        elif location == 34736:
            keys[key] = doubles[offset:offset + count]
        elif location == 34737:
            keys[key] = text[offset:offset + count].rstrip("|")
    return keys


def read_info(path: str | Path, tab: str = "Terrain Model") -> DemInfo:
    """The DEM's header: size, type, pixel size in metres, units and coordinates. Raises ProjectError for a
    file that is no DEM SEAR can use."""
    import tifffile

    path = Path(path)
    try:
        with tifffile.TiffFile(path) as tif:
            page = tif.pages.first
            tags = page.tags
            shape, dtype, samples = page.shape, page.dtype, page.samplesperpixel
            compression = page.compression
            scale = tags[33550].value if 33550 in tags else None
            tie = tags[33922].value if 33922 in tags else None
            matrix = tags[34264].value if 34264 in tags else None
            nodata_text = tags[42113].value if 42113 in tags else None
            keys = _geokeys(tags)
    except ProjectError:
        raise
    except Exception as exc:
        raise _fail(path, tab, f"this is not a TIFF file SEAR can read ({str(exc)[:120]}); export the elevation "
                               "model again as GeoTIFF.") from None
    if samples != 1 or len(shape) != 2:
        raise _fail(path, tab, f"this TIFF holds {samples} values a pixel ({'x'.join(map(str, shape))}): it is an "
                               "image, not an elevation model (one height a pixel). Export the DEM's single band.")
    if dtype is None or dtype.kind + str(dtype.itemsize) not in _DTYPES:
        raise _fail(path, tab, f"the DEM's samples are of type {dtype}; SEAR reads 8, 16 or 32-bit integers and "
                               "32 or 64-bit floats.")
    rows, cols = int(shape[0]), int(shape[1])
    if rows < 2 or cols < 2:
        raise _fail(path, tab, f"the DEM is {cols} x {rows} samples; it needs at least 2 x 2.")
    if scale is not None:
        sx, sy = float(scale[0]), float(scale[1])
        if tie is None or len(tie) < 6:
            raise _fail(path, tab, "the GeoTIFF has a pixel scale but no tie point (ModelTiepointTag), so where "
                                   "its pixels lie is unknown; export it again with its geo-referencing.")
        ti, tj, tx, ty = float(tie[0]), float(tie[1]), float(tie[3]), float(tie[4])
    elif matrix is not None and len(matrix) >= 8:
        m = [float(v) for v in matrix]
        if abs(m[1]) > 1e-12 * abs(m[0]) or abs(m[4]) > 1e-12 * abs(m[5]):
            raise _fail(path, tab, "the GeoTIFF's grid is rotated (ModelTransformationTag with a rotation); SEAR "
                                   "takes north-up grids: warp it north-up (gdalwarp) and choose it again.")
        sx, sy, ti, tj, tx, ty = m[0], -m[5], 0.0, 0.0, m[3], m[7]
    else:
        raise _fail(path, tab, "the GeoTIFF has no pixel scale (ModelPixelScaleTag) nor transformation, so its "
                               "pixel size is unknown; export it again with its geo-referencing.")
    if not (math.isfinite(sx) and math.isfinite(sy) and sx > 0 and sy > 0):
        raise _fail(path, tab, f"the GeoTIFF's pixel size {sx} x {sy} is not a positive size; a south-up grid "
                               "or a damaged file: warp it north-up (gdalwarp) and choose it again.")
    model = int(keys.get(1024, 0))
    half = 0.5 if int(keys.get(1025, 1)) == 1 else 0.0  # pixel is area: a sample is the pixel's centre
    centre_x = tx + ((cols - 1) / 2.0 + half - ti) * sx
    centre_y = ty - ((rows - 1) / 2.0 + half - tj) * sy
    z_scale, z_unit = _UNITS.get(int(keys.get(4099, 9001)), (None, ""))
    if z_scale is None:
        raise _fail(path, tab, f"the DEM's heights are in unit code {keys.get(4099)} (VerticalUnitsGeoKey), which "
                               "SEAR does not know; convert them to metres.")
    origin: tuple[float, float] | None = None
    if model == 2:  # geographic: degrees
        gcs = int(keys.get(2048, 0))
        if not (-90.0 <= centre_y <= 90.0):
            raise _fail(path, tab, f"the DEM says it is in degrees but its centre lies at latitude {centre_y}; "
                                   "its geo-referencing is damaged.")
        lat = math.radians(centre_y)
        w = 1.0 - WGS84_E2 * math.sin(lat) ** 2
        dx = math.radians(sx) * WGS84_A / math.sqrt(w) * math.cos(lat)
        dy = math.radians(sy) * WGS84_A * (1.0 - WGS84_E2) / w ** 1.5
        crs = "geographic WGS-84" if gcs == 4326 else f"geographic (datum code {gcs})"
        if gcs == 4326:
            origin = (centre_y, centre_x)
    else:
        unit = int(keys.get(3076, 9001))
        xy_scale, _xy_unit = _UNITS.get(unit, (None, ""))
        if xy_scale is None:
            raise _fail(path, tab, f"the DEM's grid is in unit code {unit} (ProjLinearUnitsGeoKey), which SEAR does "
                                   "not know; reproject it to metres (gdalwarp -t_srs EPSG:326..).")
        dx, dy = sx * xy_scale, sy * xy_scale
        code = int(keys.get(3072, 0))
        if 32601 <= code <= 32660 or 32701 <= code <= 32760:
            zone, south = code % 100, code >= 32701
            crs = f"WGS-84 / UTM zone {zone}{'S' if south else 'N'}"
            origin = utm_to_geodetic(centre_x * xy_scale, centre_y * xy_scale, zone, south)
        elif model == 1:
            crs = f"projected (EPSG code {code})" if code else "projected"
        else:
            crs = "no known coordinate system (pixel size only)"
    nodata = None
    if nodata_text is not None:
        try:
            nodata = float(str(nodata_text).strip().strip("\x00"))
        except ValueError:
            nodata = None
    codec = getattr(compression, "name", str(compression)).lower()
    return DemInfo(cols, rows, str(dtype), "uncompressed" if codec == "none" else codec, dx, dy,
                   z_scale, z_unit, crs, origin, nodata, path.stat().st_size)


def read_dem(path: str | Path, tab: str = "Terrain Model", max_samples: int | None = None
             ) -> tuple[DemInfo, np.ndarray]:
    """The DEM's header and its heights in metres ((rows, cols) float32, row 0 north). Raises ProjectError
    for a file SEAR cannot use: not a DEM, too large (`max_samples`), compressed with a codec tifffile
    cannot decode here, or with holes (no-data pixels)."""
    import tifffile

    path = Path(path)
    info = read_info(path, tab)
    if max_samples is not None and info.rows * info.cols > max_samples:
        side = math.isqrt(max_samples)
        raise _fail(path, tab, f"the DEM is {info.cols} x {info.rows} samples; SEAR takes at most {max_samples:,} "
                               f"(e.g. {side} x {side}): cut out the area you need or resample it "
                               "(gdal_translate -srcwin / -outsize) and choose it again.")
    try:
        raw = tifffile.imread(path, key=0)
    except (KeyError, ValueError, NotImplementedError, ImportError, ModuleNotFoundError) as exc:
        if "imagecodecs" in str(exc) or "compression" in str(exc).lower() or isinstance(exc, ImportError):
            raise _fail(path, tab, f"the DEM is compressed with {info.compression.upper()}, which SEAR cannot "
                                   "decode here: install the Python package imagecodecs, or save the file "
                                   "uncompressed or with Deflate (gdal_translate -co COMPRESS=DEFLATE in.tif "
                                   "out.tif) and choose it again.") from None
        raise _fail(path, tab, f"the DEM's pixels cannot be read ({str(exc)[:120]}); export it again.") from None
    except Exception as exc:
        raise _fail(path, tab, f"the DEM's pixels cannot be read ({str(exc)[:120]}); the file may be damaged: "
                               "export it again.") from None
    heights = np.asarray(raw).astype(np.float32, copy=False)
    del raw
    holes = ~np.isfinite(heights)
    if info.nodata is not None and math.isfinite(info.nodata):
        holes |= heights == np.float32(info.nodata)
    count = int(np.count_nonzero(holes))
    if count:
        r, c = np.argwhere(holes)[0]
        raise _fail(path, tab, f"the DEM has {count:,} pixels without data (holes; the first at row {r}, column {c}"
                               f"); fill them (gdal_fillnodata.py) or cut out an area without holes, and choose "
                               "it again.")
    if info.z_scale != 1.0:
        heights *= np.float32(info.z_scale)
    return info, heights
