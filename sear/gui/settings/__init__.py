"""The Project Settings window (window.py, built on project_window.py: the project, its undo history and
its file; its robot row in robot_list.py, the simulation it starts in simulation_process.py) and its tabs,
one module each: terrain_tab, body_tab (the body model or URDF, start pose, gripper), wheels_tab,
dynamics_tab and code_tab, on what every tab shares (tab.py)."""
