"""Big URDFs made at test time (never committed): a box base with two wheels and a chain or a star of
further links, each with its mass, inertia and a box for its visual and collision shape."""

from __future__ import annotations

INERTIAL = ('<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>'
            '</inertial>')


def big_urdf(links: int, *, joint: str = "revolute", layout: str = "chain", spacing: float = 0.3) -> str:
    """A URDF of `links` links (at least 3): base_link, left_wheel and right_wheel (continuous joints across
    the base) and links - 3 boxes of 0.2 m, each `spacing` m from the one before (layout "chain": each on
    the one before by a `joint` joint about z) or from the base (layout "star": all on the base)."""
    box = '<geometry><box size="0.2 0.2 0.2"/></geometry>'
    wheel = '<geometry><cylinder radius="0.1" length="0.05"/></geometry>'
    parts = ['<?xml version="1.0"?>', '<robot name="big">',
             f'<link name="base_link">{INERTIAL}<visual>{box}</visual><collision>{box}</collision></link>']
    for side, y in (("left", 0.3), ("right", -0.3)):
        parts.append(f'<link name="{side}_wheel">{INERTIAL}<visual><origin rpy="1.5708 0 0"/>{wheel}</visual>'
                     f'<collision><origin rpy="1.5708 0 0"/>{wheel}</collision></link>')
        parts.append(f'<joint name="{side}_wheel_joint" type="continuous"><parent link="base_link"/>'
                     f'<child link="{side}_wheel"/><origin xyz="0 {y} 0"/><axis xyz="0 1 0"/></joint>')
    for i in range(links - 3):
        parent = "base_link" if layout == "star" or i == 0 else f"l{i - 1}"
        offset = spacing * (i + 1) if layout == "star" else spacing
        parts.append(f'<link name="l{i}">{INERTIAL}<visual>{box}</visual><collision>{box}</collision></link>')
        limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>' if joint == "revolute" else ""
        parts.append(f'<joint name="j{i}" type="{joint}"><parent link="{parent}"/><child link="l{i}"/>'
                     f'<origin xyz="0 0 {offset}"/><axis xyz="0 0 1"/>{limit}</joint>')
    parts.append("</robot>")
    return "\n".join(parts)
