"""The Terrain Model tab: the terrain's file, where on Earth its centre is, and how its model is read."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QPushButton, QVBoxLayout, QWidget

from sear.errors import SearError
from sear.fielddocs import field_docs
from sear.gui.preview import MeshPreview
from sear.gui.settings.tab import EditedProject, SettingsTab, with_preview
from sear.gui.widgets import FileField
from sear.models.meshfiles import HEIGHTMAP_SUFFIXES, MESH_SUFFIXES, file_suffix
from sear.project import Terrain

TERRAIN_FILTER = ("Terrain models and heightmaps (" + " ".join(f"*{s}" for s in MESH_SUFFIXES + HEIGHTMAP_SUFFIXES)
                  + ");;Models (" + " ".join(f"*{s}" for s in MESH_SUFFIXES)
                  + ");;Heightmap images (" + " ".join(f"*{s}" for s in HEIGHTMAP_SUFFIXES) + ");;All files (*)")


class TerrainTab(SettingsTab):
    TITLE = "Terrain Model"
    SECTIONS = ("terrain",)

    def __init__(self, source: EditedProject) -> None:
        super().__init__(source)
        box = QWidget()
        layout = QVBoxLayout(box)
        self.terrain_file = FileField("Choose the terrain model", TERRAIN_FILTER,
                                      tooltip=field_docs(Terrain)["file"])
        self.terrain_file.changed.connect(self._file_chosen)
        files = QFormLayout()
        files.addRow("Terrain model file:", self.terrain_file)
        layout.addLayout(files)
        where = QGroupBox("Where on Earth the terrain's centre is")
        where_form = self.form("terrain", Terrain, ["latitude", "longitude", "altitude"])
        self.use_file_origin = QPushButton("Take them from the elevation model")
        self.use_file_origin.setToolTip("Set the latitude and longitude of the GeoTIFF's centre and its height "
                                        "there (geographic WGS-84 and UTM files say where they lie).")
        self.use_file_origin.setEnabled(False)
        self.use_file_origin.clicked.connect(self._take_file_origin)
        where_form.addRow("", self.use_file_origin)
        where.setLayout(where_form)
        layout.addWidget(where)
        self.file_info = QLabel("")
        """What the file is: a heightmap's or an elevation model's size, resolution and the memory a run
        needs for it."""
        self.file_info.setWordWrap(True)
        self.file_info.setMinimumHeight(self.file_info.fontMetrics().lineSpacing() * 4)
        self._file_origin: tuple[float, float, float] | None = None
        model = QGroupBox("Model")
        model.setLayout(self.form("terrain", Terrain, ["scale", "heightmap_size", "heightmap_height"]))
        layout.addWidget(model)
        about = QGroupBox("The file")
        about_layout = QVBoxLayout(about)
        about_layout.addWidget(self.file_info)
        layout.addWidget(about)
        layout.addStretch(1)
        self.terrain_preview = MeshPreview()
        with_preview(box, self.terrain_preview, self)

    def _take_file_origin(self) -> None:
        """The elevation model's centre as the terrain's latitude, longitude and altitude."""
        if self._file_origin is None:
            return
        lat, lon, alt = self._file_origin
        self.set_field("terrain", "latitude", round(lat, 7))
        self.set_field("terrain", "longitude", round(lon, 7))
        self.set_field("terrain", "altitude", round(alt, 3))
        self.refresh()

    def _file_chosen(self, path: Path | None) -> None:
        self.set_field("terrain", "file", path, preview=True)

    def refresh(self) -> None:
        super().refresh()
        self.terrain_file.base = self.project.path.parent if self.project.path else None
        self.terrain_file.set(self.project.terrain.file)

    def update_enabled(self) -> None:
        """A heightmap's size and height apply to heightmap images only (an elevation model has its own
        units and pixel size), the scale to models only."""
        file = self.project.terrain.file
        heightmap = file is not None and file_suffix(file) in HEIGHTMAP_SUFFIXES and not _is_dem(file)
        self.numbers[("terrain", "heightmap_size")].setEnabled(heightmap)
        self.numbers[("terrain", "heightmap_height")].setEnabled(heightmap)
        self.numbers[("terrain", "scale")].setEnabled(file is None or file_suffix(file) in MESH_SUFFIXES)

    def update_preview(self) -> None:
        from sear.models.meshfiles import load_terrain  # reads models: trimesh is loaded only now

        self._file_origin = None
        self.file_info.setText("")
        try:
            if self.project.terrain.file is None:
                self.terrain_preview.show_message("Choose a terrain model to see it here.")
            else:
                model = load_terrain(self.project.terrain)
                self.terrain_preview.show_meshes([(model.preview_mesh(), (0.45, 0.62, 0.35))])
                self._file_origin = model.geo_origin
                self.file_info.setText(model.info)
        except SearError as exc:
            self.terrain_preview.show_message(str(exc))
        self.use_file_origin.setEnabled(self._file_origin is not None)

    def field_widget(self, field: str) -> QWidget | None:
        if field == "terrain.file":
            return self.terrain_file.edit
        return super().field_widget(field)


def _is_dem(file: Path) -> bool:
    """Whether `file` is a GeoTIFF elevation model (its own units and pixel size: no heightmap fields)."""
    if file_suffix(file) not in (".tif", ".tiff") or not file.is_file():
        return False
    from sear.models.dem import is_geotiff

    return is_geotiff(file)
