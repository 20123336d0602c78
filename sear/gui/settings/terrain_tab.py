"""The Terrain Model tab: the terrain's file, where on Earth its centre is, and how its model is read."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFormLayout, QGroupBox, QVBoxLayout, QWidget

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
        where.setLayout(self.form("terrain", Terrain, ["latitude", "longitude", "altitude"]))
        layout.addWidget(where)
        model = QGroupBox("Model")
        model.setLayout(self.form("terrain", Terrain, ["scale", "heightmap_size", "heightmap_height"]))
        layout.addWidget(model)
        layout.addStretch(1)
        self.terrain_preview = MeshPreview()
        with_preview(box, self.terrain_preview, self)

    def _file_chosen(self, path: Path | None) -> None:
        self.set_field("terrain", "file", path, preview=True)

    def refresh(self) -> None:
        super().refresh()
        self.terrain_file.base = self.project.path.parent if self.project.path else None
        self.terrain_file.set(self.project.terrain.file)

    def update_enabled(self) -> None:
        """A heightmap's size and height apply to heightmap images only, the scale to models only."""
        file = self.project.terrain.file
        heightmap = file is not None and file_suffix(file) in HEIGHTMAP_SUFFIXES
        self.numbers[("terrain", "heightmap_size")].setEnabled(heightmap)
        self.numbers[("terrain", "heightmap_height")].setEnabled(heightmap)
        self.numbers[("terrain", "scale")].setEnabled(not heightmap)

    def update_preview(self) -> None:
        from sear.models.meshfiles import load_terrain  # reads models: trimesh is loaded only now

        try:
            if self.project.terrain.file is None:
                self.terrain_preview.show_message("Choose a terrain model to see it here.")
            else:
                model = load_terrain(self.project.terrain)
                self.terrain_preview.show_meshes([(model.mesh, (0.45, 0.62, 0.35))])
        except SearError as exc:
            self.terrain_preview.show_message(str(exc))

    def field_widget(self, field: str) -> QWidget | None:
        if field == "terrain.file":
            return self.terrain_file.edit
        return super().field_widget(field)
