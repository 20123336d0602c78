"""The simulation window's keys: what each key does, and routing them to the window whichever of its
widgets has the focus.

Driving, camera and gripper-lift keys are held (the 3-D view keeps the set held: SimView.held) and
several at once; Enter, Space, F1, G and Tab act once. Text fields keep their keys; Esc anywhere in the
window gives the focus back to the 3-D view. A QShortcut cannot do this: it sees no key releases, and
keys are held to drive.
"""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDockWidget,
    QLineEdit,
    QMainWindow,
    QMenuBar,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

if TYPE_CHECKING:
    from sear.gui.simcamera import Cameras
    from sear.gui.simview import SimView
    from sear.runtime.simulation import Simulation

DRIVE_KEYS = {
    Qt.Key.Key_U: "forward", Qt.Key.Key_Up: "forward",
    Qt.Key.Key_J: "brake", Qt.Key.Key_Down: "back",
    Qt.Key.Key_H: "left", Qt.Key.Key_Left: "left",
    Qt.Key.Key_K: "right", Qt.Key.Key_Right: "right",
}
GRIPPER_LIFT_KEYS = {Qt.Key.Key_T: 1, Qt.Key.Key_B: -1}
"""Held: the gripper's lift goes up (T) or down (B) while the key is down, and stops when it is let go."""
GRIPPER_KEY = Qt.Key.Key_G
"""Pressed: the gripper's paddles close when open, open when closed."""
CAMERA_KEYS = {
    Qt.Key.Key_W: (1, 0, 0), Qt.Key.Key_S: (-1, 0, 0), Qt.Key.Key_A: (0, 1, 0), Qt.Key.Key_D: (0, -1, 0),
    Qt.Key.Key_Q: (0, 0, 1), Qt.Key.Key_Z: (0, 0, -1),
}
"""Held: the camera moves (forward, left, up) in the view's frame."""
ONE_SHOT_KEYS = {Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space, Qt.Key.Key_F1}
"""Keys that act once when pressed (reset, start the user code, the keys' help), whatever has the focus.
(F1 is also the Help menu's shortcut, which takes it first when the window is active.)"""
HELP = """<b>Keys</b> (hold them; several at once)<br>
<table cellspacing=4>
<tr><td><b>U</b> / ↑</td><td>accelerate</td></tr>
<tr><td><b>J</b></td><td>brake</td></tr>
<tr><td>↓</td><td>reverse</td></tr>
<tr><td><b>H</b> / ←, <b>K</b> / →</td><td>steer left, right (no wheel steers: turn by the sides,
on the spot alone)</td></tr>
<tr><td><b>Enter</b></td><td>reset the robot to its start pose</td></tr>
<tr><td><b>Space</b></td><td>start the user code (restart it after an error)</td></tr>
<tr><td><b>Tab</b></td><td>next robot (several robots): the keys drive it; camera, HUD, sensor docks follow it</td></tr>
<tr><td><b>W S A D</b></td><td>camera forward, back, left, right</td></tr>
<tr><td><b>Q Z</b></td><td>camera up, down</td></tr>
<tr><td>mouse</td><td>drag to orbit, wheel to zoom; click: what it is and its pose</td></tr>
<tr><td>drag a box</td><td>pull a movable obstacle (Shift + drag: a robot)</td></tr>
<tr><td><b>Home</b></td><td>reset the view onto the robot</td></tr>
<tr><td><b>G</b></td><td>gripper: close / open the paddles</td></tr>
<tr><td><b>T</b> / <b>B</b></td><td>gripper: raise / lower the lift (hold)</td></tr>
<tr><td><b>P</b> / <b>N</b></td><td>pause / single step</td></tr>
<tr><td><b>R</b></td><td>show sensor rays</td></tr>
<tr><td><b>Esc</b></td><td>back to the 3-D view from a text field</td></tr>
<tr><td><b>F12</b></td><td>save a picture of the view (Shift+F12: ask where)</td></tr>
<tr><td><b>Ctrl+R</b> / <b>Ctrl+Shift+R</b></td><td>record the run (MCAP) / a video (MP4): again to stop</td></tr>
<tr><td><b>Ctrl+W</b> / <b>Ctrl+Q</b></td><td>close the window / quit</td></tr>
<tr><td><b>F1</b></td><td>this help</td></tr>
</table>
These keys work whichever control has the focus, except while you type in a text field.<br>
Driving from the keyboard, the camera keeps the robot in view until you move the camera<br>
yourself (mouse or W S A D Q Z); choose a camera in the Camera box to let it follow again."""


def is_text_field(widget: QWidget | None) -> bool:
    """Whether keys pressed in `widget` are typed text: an editable line edit, spin box, text editor or
    editable combo box (a read-only text, such as the console, is not one)."""
    if isinstance(widget, (QLineEdit, QAbstractSpinBox, QTextEdit, QPlainTextEdit)):
        return not widget.isReadOnly()
    return isinstance(widget, QComboBox) and widget.isEditable()


class KeyTarget(Protocol):
    """What the keys act on (sear.gui.simwindow.SimulationWindow)."""

    simulation: Simulation
    view: SimView
    """Keeps the keys held (SimView.held); Esc gives it the focus."""
    cameras: Cameras
    commands: dict[str, QAction]

    def start_user_code(self) -> None: ...

    def reset(self) -> None: ...

    def next_robot(self) -> None: ...


class KeyRouter(QObject):
    """Sends the keys of `window` (and of its docks) to `target` whichever of its widgets has the focus (an
    event filter on the application: a key press goes to the focused widget, and the Camera box would
    open on Space and the plot list would search for U). Popups (the Camera box's list, menus) and dialogs
    keep theirs."""

    def __init__(self, window: QMainWindow, target: KeyTarget) -> None:
        super().__init__(window)
        self.window = window
        self.target = target

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) or not isinstance(obj, QWidget) \
                or isinstance(QApplication.focusWidget() or obj, QMenuBar):  # after Alt, arrows walk the menus
            return False
        top = QWidget.window(obj)
        if top is not self.window and not (isinstance(top, QDockWidget) and top.parentWidget() is self.window):
            return False
        try:
            return self.route(obj, event)
        except Exception:  # an exception escaping an event filter would take the whole application down
            traceback.print_exc()
            return False

    def route(self, widget: QWidget, event) -> bool:
        """A key press or release in `widget` of the window; True when it was handled here.

        Driving and camera keys are held (auto-repeat ignored), Enter and Space act once, Esc gives the
        focus to the 3-D view: whichever widget has the focus, except a text field being typed in, which
        keeps all but Esc. Keys with Ctrl or Alt are left to the shortcuts (Ctrl+Q, Ctrl+W, ...)."""
        target = self.target
        simulation, held = target.simulation, target.view.held
        key = Qt.Key(event.key())
        gripper_key = (simulation.driven in simulation.world.grippers
                       and (key in GRIPPER_LIFT_KEYS or key == GRIPPER_KEY))
        robot_key = key == Qt.Key.Key_Tab and len(simulation.robots) > 1  # one robot: Tab moves the focus
        ours = key in DRIVE_KEYS or key in CAMERA_KEYS or key in ONE_SHOT_KEYS or gripper_key or robot_key
        if event.type() == QEvent.Type.KeyRelease:
            if not event.isAutoRepeat():
                held.discard(key)  # also when typing: a key held into a text field must let go
                if key in GRIPPER_LIFT_KEYS and gripper_key:
                    simulation.set_gripper_input(lift=0)  # stop the lift where it is
            return ours and not is_text_field(QApplication.focusWidget() or widget)
        modifiers = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if modifiers != Qt.KeyboardModifier.NoModifier:
            return False
        if key == Qt.Key.Key_Escape:
            target.view.setFocus(Qt.FocusReason.ShortcutFocusReason)
            return True
        if not ours or is_text_field(QApplication.focusWidget() or widget) or is_text_field(widget):
            return False
        if event.isAutoRepeat():
            return True
        if key in DRIVE_KEYS:
            held.add(key)
            target.cameras.driving()
        elif key in CAMERA_KEYS:
            held.add(key)
        elif key in GRIPPER_LIFT_KEYS:
            held.add(key)
            simulation.set_gripper_input(lift=GRIPPER_LIFT_KEYS[key])
        elif key == GRIPPER_KEY:
            gripper = simulation.world.grippers[simulation.driven]
            lift = sum(GRIPPER_LIFT_KEYS[k] for k in held if k in GRIPPER_LIFT_KEYS)
            simulation.set_gripper_input(open=not gripper.open_command, lift=lift)
        elif key == Qt.Key.Key_Space:
            target.start_user_code()
        elif key == Qt.Key.Key_F1:
            target.commands["help"].toggle()
        elif robot_key:
            target.next_robot()
        else:
            target.reset()
        return True
