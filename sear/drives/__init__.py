"""The drive models: how a robot's drive inputs (engine force, `sim.drive(left, right)`, steering) become
each wheel's drive force and steering angle. One module per model (car, skid, differential), listed in
`registry`; `base` has what every model shares. Pure declarations (no physics engine, no Qt): the project
schema, the settings window, the mesh vehicle and URDF robots all ask the registry."""
