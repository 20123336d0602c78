"""The models a project refers to (the specification's "Models"), as pure data (no pybullet, no Qt):

- meshfiles: mesh files and heightmap images read into trimesh meshes, in SEAR's frame and units;
- robotdesc: robots described by URDF files (the description, its wheels, its collision report);
- loaded: a project's models as loaded, what its world is built from.

Each reader is self-contained: it knows files, not projects. sear.loading reads a project's models
through them, every problem reported.
"""
