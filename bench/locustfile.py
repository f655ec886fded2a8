"""What a support engineer does on Casebook, for locust (run by bench/load.py, which sets the target).

Each simulated engineer, signed in, with 1-3 s of reading between requests, opens the case list, a
case page, the case's timeline (the whole capture, and zoomed on a few minutes) and the moment panel
at a random time of the capture. They share one signed-in session (bench/load.py signs in once: a
login costs a password hash, which is not what is measured here), as tabs of one browser would.
Environment (set by bench/load.py): ``LOAD_SESSION_ID``, ``LOAD_CASE_ID``, ``LOAD_WINDOW_START_MS``,
``LOAD_WINDOW_END_MS``.
"""

from __future__ import annotations

import os
import random

from locust import HttpUser, between, task

CASE_ID = os.environ.get("LOAD_CASE_ID", "1")
WINDOW_START_MS = int(os.environ.get("LOAD_WINDOW_START_MS", "0"))
WINDOW_END_MS = int(os.environ.get("LOAD_WINDOW_END_MS", "0"))
#: A zoomed view: the few minutes an engineer looks at around a finding.
ZOOM_MS = 3 * 60 * 1000


class Engineer(HttpUser):
    wait_time = between(1, 3)  # reading the page before the next click

    def on_start(self) -> None:
        self.client.cookies.set("sessionid", os.environ["LOAD_SESSION_ID"])

    def _moment_ms(self) -> int:
        return random.randint(WINDOW_START_MS, max(WINDOW_START_MS, WINDOW_END_MS))

    @task(2)
    def case_list(self) -> None:
        self.client.get("/", name="case list")

    @task(3)
    def case_page(self) -> None:
        self.client.get(f"/cases/{CASE_ID}/", name="case page")

    @task(3)
    def timeline(self) -> None:
        self.client.get(f"/cases/{CASE_ID}/timeline.json", name="timeline")

    @task(1)
    def timeline_zoomed(self) -> None:
        start = self._moment_ms()
        self.client.get(
            f"/cases/{CASE_ID}/timeline.json",
            params={"start": start, "end": start + ZOOM_MS},
            name="timeline zoomed",
        )

    @task(3)
    def moment(self) -> None:
        self.client.get(f"/cases/{CASE_ID}/moment.json", params={"t": self._moment_ms()}, name="moment")
