"""Ansible's default output, with one live line per host while its bench runs.

The bench task is started in the background (``async``) and a follow-up task reads the last
progress line the bench wrote (trial i of n, elapsed, remaining, live tps) every few seconds
until it ends. Ansible reports each such look as a retry; the default output says only
"FAILED - RETRYING: … (N retries left)", so this callback prints the line itself instead:

    [db1] trial 3/18 · 0:42 elapsed · about 4:10 left · 1,204 tps

Everything else is the ``default`` callback's.
"""

from __future__ import annotations

from ansible.plugins.callback.default import CallbackModule as DefaultCallback

DOCUMENTATION = """
    name: kb_progress
    type: stdout
    short_description: the default output, with each host's bench progress as one line
    description:
      - Like the default callback; a retried task whose result has a C(progress) line prints
        that line with its host instead of the retry notice.
    extends_documentation_fragment:
      - default_callback
      - result_format_callback
    requirements:
      - set as stdout callback in ansible.cfg
"""


class CallbackModule(DefaultCallback):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "kb_progress"

    def __init__(self) -> None:
        super().__init__()
        self._last: dict[str, str] = {}

    def v2_runner_retry(self, result):  # Ansible calls it with its CallbackTaskResult
        line = (result.result.get("stdout") or "").strip()
        host = result.host.get_name()
        if not line:
            super().v2_runner_retry(result)
        elif self._last.get(host) != line:  # a line once, not again at every look
            self._last[host] = line
            self._display.display(f"[{host}] {line}")
