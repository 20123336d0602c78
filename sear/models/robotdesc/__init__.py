"""Robot descriptions from URDF files, as pure data (no pybullet, no Qt), one module a job:

- model: links, joints, their shapes and the frames they make at the zero pose (RobotDescription);
- parse: reading a .urdf file into that model (load_urdf), every bad input a message naming its line;
- wheels: which joints drive and steer the wheels (SEAR's proposal, the project's choice);
- drive: the drive type and acceleration force SEAR proposes from the wheels, masses and friction;
- report: the collision report (overlapping links, bad masses and inertias, open meshes);
- mounting: a pose on a link carried into the root link's frame.
"""
