"""Run only by tests/test_servers_stop.py, as a test session of its own: a
client of the embedded Redis that outlives the session (as a worker that is
still stopping does), so the server has a client when pytest exits."""

import subprocess
import sys

HOLD = (
    "import redis, sys, time; c = redis.Redis(unix_socket_path=sys.argv[1]); "
    "c.ping(); print('connected', flush=True); time.sleep(4)"
)


def test_a_client_outlives_the_session():
    from django.conf import settings

    from annotator.core import embedded

    socket = embedded.redis_socket(settings.VAR_DIR)
    client = subprocess.Popen(
        [sys.executable, "-c", HOLD, socket],
        start_new_session=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert client.stdout.readline().strip() == "connected"
