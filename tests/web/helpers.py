"""Helpers shared by the web page's server tests."""


def receive(ws, kind):
    """The next message of type ``kind`` (the opening and frames of a game still playing may come first)."""
    while True:
        message = ws.receive_json()
        if message["type"] == kind:
            return message
        assert message["type"] in ("opened", "frame", "status"), message
