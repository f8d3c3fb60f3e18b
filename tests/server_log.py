"""Reading a Streamlit server's log in the browser tests: the app's own errors, not a client hanging up.

Streamlit 1.67's Starlette server logs a traceback of its own when a browser's websocket goes away at
the wrong moment (``starlette.websockets.WebSocketDisconnected``: "Need to call accept first", then
"Cannot call send once a close message has been sent"), e.g. while the server stops with a page still
connected.  That is the library's connection handling, not an error of the dashboard: every other
traceback still counts.
"""

CLIENT_HUNG_UP = ("starlette.websockets.WebSocketDisconnected",)


def app_errors(log_text: str) -> list[str]:
    """The final exception line of every traceback in ``log_text`` that is not a client hanging up."""
    errors, inside = [], False
    for line in log_text.splitlines():
        if "Traceback (most recent call last):" in line:
            inside = True
            continue
        if inside and line.strip() and not line.startswith((" ", "\t")):
            inside = False
            if not line.startswith(CLIENT_HUNG_UP):
                errors.append(line)
    return errors
