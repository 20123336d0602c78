"""The Vehicle Dynamics tab's drive type: every type the project format knows, differential included."""

from __future__ import annotations

import pytest
from lxml import etree

from sear import xmlio
from sear.project import Project

pytestmark = pytest.mark.gl


def _schema_drive_types() -> list[str]:
    """The words <drive_type> accepts, as the project schema files are checked against lists them."""
    doc = etree.fromstring(xmlio.schema_text("project.xsd").encode())
    ns = {"xs": "http://www.w3.org/2001/XMLSchema"}
    return doc.xpath("//xs:simpleType[@name='driveType']//xs:enumeration/@value", namespaces=ns)


def test_the_drive_type_list_is_the_project_formats(window):
    offered = [window.dynamics_tab.drive_type.itemData(i) for i in range(window.dynamics_tab.drive_type.count())]
    assert offered == _schema_drive_types()
    assert "differential" in offered


def test_differential_chosen_on_the_tab_is_saved_and_read_back(window, demo_copy, tmp_path, answers):
    answers.open_path = str(demo_copy / "demo.prj")
    assert window.open_project()
    assert window.project.dynamics.drive_type == "car"
    window.dynamics_tab.drive_type.setCurrentIndex(window.dynamics_tab.drive_type.findData("differential"))
    assert window.project.dynamics.drive_type == "differential" and window.dirty
    answers.save_path = str(tmp_path / "diff.prj")
    assert window.save_as()
    assert Project.load(tmp_path / "diff.prj").dynamics.drive_type == "differential"
    # And the window shows it again when the file is opened.
    window.dynamics_tab.drive_type.setCurrentIndex(window.dynamics_tab.drive_type.findData("car"))
    window.dirty = False
    answers.open_path = str(tmp_path / "diff.prj")
    assert window.open_project()
    assert window.dynamics_tab.drive_type.currentData() == "differential"
