"""The browser tests' reading of the server log: every app error counts, a client hanging up does not."""

from server_log import app_errors

HUNG_UP = """2026-11-23 13:53:19.731 Uvicorn server started on 127.0.0.1:57627
Traceback (most recent call last):
  File ".../starlette/websockets.py", line 131, in receive_bytes
    raise WebSocketDisconnected('WebSocket is not connected. Need to call "accept" first.')
starlette.websockets.WebSocketDisconnected: WebSocket is not connected. Need to call "accept" first.

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File ".../starlette/websockets.py", line 104, in send
    raise WebSocketDisconnected('Cannot call "send" once a close message has been sent.')
starlette.websockets.WebSocketDisconnected: Cannot call "send" once a close message has been sent.
  Stopping...
"""

APP_ERROR = """Traceback (most recent call last):
  File "dashboard/views/fit.py", line 10, in <module>
    services.fit(spec)
frl_engine.errors.DataError: Column 'Age' has no numbers
"""


def test_a_client_hanging_up_is_not_an_app_error_but_every_other_traceback_is():
    assert app_errors(HUNG_UP) == []
    assert app_errors(APP_ERROR) == ["frl_engine.errors.DataError: Column 'Age' has no numbers"]
    assert app_errors(HUNG_UP + APP_ERROR) == ["frl_engine.errors.DataError: Column 'Age' has no numbers"]
    assert app_errors("  You can now view your Streamlit app\n") == []
