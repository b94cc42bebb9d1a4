"""A page's request for the widgets' state while a panel callback runs on a thread.

A real kernel; the test plays the page's part as ipywidgets 8's manager does it
(``_loadFromKernel``): it opens the control comm, asks ``request_states``,
builds its widgets from the answer and applies the updates that follow it; an
update sent before the answer is for a widget it does not have yet, dropped.
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

# a panel whose callback, on a thread, sets its status line while the kernel writes the
# answer: after the answer has read the status line (the panel's widgets come first), at the
# moment it reads a widget made after them, which waits for the callback to be done
KERNEL_CODE = """
import threading, traitlets, ipywidgets as w
from cctx_research.widgets._panel import Panel

class Small(Panel):
    def __init__(self):
        super().__init__()
        self._setup(None, [])
        self.children = [self.banner, self.status]

panel = Small()
panel._say("fetching")
armed, done = threading.Event(), threading.Event()
reads, sets = threading.Semaphore(0), threading.Semaphore(0)

def _slow(value, widget):
    if armed.is_set():  # the answer's read, not the widget's own opening
        reads.release()
        sets.acquire(timeout=20)
    return value

class Last(w.HTML):
    value = traitlets.Unicode("").tag(sync=True, to_json=_slow)

last = Last()
armed.set()

def _draw():
    k = 0
    while reads.acquire(timeout=30 if k == 0 else 1):
        k += 1
        panel._say(f"drawn {k}")
        sets.release()
    done.set()

threading.Thread(target=panel._run, args=(_draw,), daemon=True).start()
"""


@pytest.fixture
def kernel() -> Iterator[Any]:
    manager, client = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _run(client: Any, code: str, **expressions: str) -> dict[str, Any]:
    msg_id = client.execute(code, user_expressions=expressions)
    reply = client.get_shell_msg(timeout=TIMEOUT_S)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = client.get_shell_msg(timeout=TIMEOUT_S)
    content = reply["content"]
    assert content["status"] == "ok", content.get("traceback")
    _until_idle(client, msg_id)  # what the code sent is not the page's load
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


Updates = list[tuple[str, dict[str, Any]]]


def _page_load(client: Any) -> tuple[dict[str, dict[str, Any]], Updates, Updates]:
    """The widgets' state as a page has it once loaded; the updates it dropped, and applied."""
    comm_id = uuid.uuid4().hex
    opened = client.session.msg(
        "comm_open",
        {"comm_id": comm_id, "target_name": "jupyter.widget.control", "data": {}},
        metadata={"version": "1.0.0"},
    )
    client.shell_channel.send(opened)
    request = client.session.msg(
        "comm_msg", {"comm_id": comm_id, "data": {"method": "request_states"}}
    )
    client.shell_channel.send(request)
    states: dict[str, dict[str, Any]] = {}
    dropped: Updates = []
    applied: Updates = []

    def seen(msg: dict[str, Any]) -> None:
        data = msg["content"].get("data", {}) if msg["msg_type"] == "comm_msg" else {}
        if data.get("method") == "update_states":
            states.update({k: dict(v["state"]) for k, v in data["states"].items()})
        elif data.get("method") == "update":
            update = (msg["content"]["comm_id"], data["state"])
            if not states:
                dropped.append(update)  # no model for it yet: the page drops it
            else:
                states[update[0]].update(update[1])
                applied.append(update)

    _until_idle(client, request["header"]["msg_id"], seen)
    assert states, "the kernel did not answer request_states"
    return states, dropped, applied


def test_a_status_set_while_the_page_loads_reaches_the_page(kernel):
    ids = _run(kernel, KERNEL_CODE, status="panel.status.model_id")
    states, dropped, _ = _page_load(kernel)
    done = _run(kernel, "done.wait(30)", value="panel.status.value", done="done.is_set()")
    assert done["done"]  # the callback ran as arranged: set its line at each read, then ended
    assert done["value"].startswith("drawn")
    # its last update went out before the answer, which had read the line before it
    assert (ids["status"], {"value": done["value"]}) in dropped
    assert states[ids["status"]]["value"] == done["value"]  # sent again after the answer


def test_a_page_loaded_between_callbacks_gets_the_answer_alone(kernel):
    ids = _run(kernel, KERNEL_CODE, status="panel.status.model_id")
    # the callback sets its line once and is done before the page asks
    _run(kernel, "armed.clear(); reads.release(); done.wait(30)")
    states, dropped, applied = _page_load(kernel)
    assert (dropped, applied) == ([], [])  # nothing sent again: the answer has it all
    assert states[ids["status"]]["value"] == "drawn 1"
