"""A page that loads while a panel's callback sets its widgets.

A real kernel; the test plays the page's part as ipywidgets 8's manager does it
(``_loadFromKernel``): it opens the control comm, asks ``request_states`` and
takes the answer; its models are made a few awaits later, and an update that
arrives before then is dropped; once made, it displays the panel's view, which
reports the view (``_view_count``) when the model counts them, and applies the
updates that follow.
"""

from __future__ import annotations

import ast
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")
pytest.importorskip("ipywidgets")

TIMEOUT_S = 60

# a panel whose status line is read on the main thread, once armed, and then waits until a
# callback on a thread has moved it: the read value is sent after the callback's own update
KERNEL_CODE = """
import threading, traitlets, ipywidgets as w
from cctx_research.widgets._panel import Panel

armed, held, moved, started = (threading.Event() for _ in range(4))

def _held(value, widget):
    if armed.is_set() and threading.current_thread() is threading.main_thread():
        armed.clear()
        held.set()
        moved.wait(20)
    return value

class Line(w.HTML):
    value = traitlets.Unicode("").tag(sync=True, to_json=_held)

class Small(Panel):
    def __init__(self):
        super().__init__()
        self._setup(None, [])
        self.status = Line()
        self.children = [self.banner, self.status]

panel = Small()
panel._say("fetching")

def _draw():
    panel._say("drawn 1")
    started.set()
    if not held.wait(20):
        raise RuntimeError("the page's view was not handled while the callback waited")
    panel._say("drawn 2")
    moved.set()

callback = threading.Thread(target=panel._run, args=(_draw,), daemon=True)
"""


@pytest.fixture
def kernel() -> Iterator[Any]:
    manager, client = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


Updates = list[tuple[str, dict[str, Any]]]


class Page:
    """The widgets as a page has them: the answer's states, then the updates it keeps."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.states: dict[str, dict[str, Any]] = {}
        self.made = False  # the page's models exist (they are made after the answer)
        self.dropped: Updates = []
        self.applied: Updates = []

    def seen(self, msg: dict[str, Any]) -> None:
        data = msg["content"].get("data", {}) if msg["msg_type"] == "comm_msg" else {}
        if data.get("method") == "update_states":
            self.states = {k: dict(v["state"]) for k, v in data["states"].items()}
        elif data.get("method") == "update":
            update = (msg["content"]["comm_id"], data["state"])
            if not self.made:
                self.dropped.append(update)  # no model for it yet: the page drops it
            else:  # a widget made after the load has its own comm_open: a state to update
                self.states.setdefault(update[0], {}).update(update[1])
                self.applied.append(update)

    def send(self, msg_type: str, content: dict[str, Any], **options: Any) -> None:
        """Send to the kernel and read what it says until it has handled the message."""
        msg = self.client.session.msg(msg_type, content, **options)
        self.client.shell_channel.send(msg)
        _until_idle(self.client, msg["header"]["msg_id"], self.seen)

    def load(self) -> None:
        comm_id = uuid.uuid4().hex
        self.send(
            "comm_open",
            {"comm_id": comm_id, "target_name": "jupyter.widget.control", "data": {}},
            metadata={"version": "1.0.0"},
        )
        self.send("comm_msg", {"comm_id": comm_id, "data": {"method": "request_states"}})
        assert self.states, "the kernel did not answer request_states"

    def show(self, model_id: str, views: int = 1) -> None:
        """The models made and a view of ``model_id`` displayed (or removed): reported."""
        self.made = True
        if self.states[model_id].get("_view_count") is None:
            return  # the model does not count its views: the page says nothing
        state = {"_view_count": views}
        self.send("comm_msg", {"comm_id": model_id, "data": {"method": "update", "state": state}})

    def run(self, code: str, **expressions: str) -> dict[str, Any]:
        return _run(self.client, code, self.seen, **expressions)


def _run(client: Any, code: str, seen: Any = None, **expressions: str) -> dict[str, Any]:
    msg_id = client.execute(code, user_expressions=expressions)
    reply = client.get_shell_msg(timeout=TIMEOUT_S)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = client.get_shell_msg(timeout=TIMEOUT_S)
    content = reply["content"]
    assert content["status"] == "ok", content.get("traceback")
    _until_idle(client, msg_id, seen)
    return {
        k: ast.literal_eval(v["data"]["text/plain"]) for k, v in content["user_expressions"].items()
    }


def _until_idle(client: Any, msg_id: str, seen: Any = None) -> None:
    while True:
        msg = client.get_iopub_msg(timeout=TIMEOUT_S)
        if seen is not None:
            seen(msg)
        if (
            msg["msg_type"] == "status"
            and msg["content"]["execution_state"] == "idle"
            and msg["parent_header"].get("msg_id") == msg_id
        ):
            return


def test_a_value_set_before_the_pages_models_exist_reaches_the_page(kernel):
    ids = _run(kernel, KERNEL_CODE, panel="panel.model_id", status="panel.status.model_id")
    page = Page(kernel)
    page.load()
    assert page.states[ids["status"]]["value"] == "fetching"
    page.run("panel._say('drawn')")  # between the answer and the page's models
    assert (ids["status"], {"value": "drawn"}) in page.dropped
    page.show(ids["panel"])
    assert page.states[ids["status"]]["value"] == "drawn"  # sent again once displayed


def test_a_view_displayed_while_a_callback_runs_ends_on_the_callbacks_last_values(kernel):
    ids = _run(kernel, KERNEL_CODE, panel="panel.model_id", status="panel.status.model_id")
    page = Page(kernel)
    page.load()
    # the callback sets "drawn 1" (dropped: no models yet) and waits; the page displays the
    # panel: the main thread sends the panel again, reads "drawn 1", and waits while the
    # callback sets "drawn 2"; so "drawn 1" goes out after "drawn 2"
    assert page.run("armed.set(); callback.start()", started="started.wait(20)")["started"]
    page.show(ids["panel"])
    got = page.run("callback.join(30)", alive="callback.is_alive()", value="panel.status.value")
    assert not got["alive"]
    assert got["value"] == "drawn 2"
    status = [u[1]["value"] for u in page.applied if u[0] == ids["status"]]
    assert status[:2] == ["drawn 2", "drawn 1"]  # the race, as arranged
    assert page.states[ids["status"]]["value"] == "drawn 2"  # sent once more when it ended


def test_a_view_removed_sends_nothing_again(kernel):
    ids = _run(kernel, KERNEL_CODE, panel="panel.model_id")
    page = Page(kernel)
    page.load()
    page.show(ids["panel"])
    sent = len(page.applied)
    assert sent > 1  # the panel, its status line, its banner... sent again
    page.show(ids["panel"], views=0)
    assert page.applied[sent:] == []
