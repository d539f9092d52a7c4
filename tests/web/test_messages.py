"""elfweb.messages: each type's schema accepts its messages and refuses everything else with BadMessage."""

import json
import random

import pytest

from elfweb.messages import MAX_MESSAGE_BYTES, SCHEMAS, BadMessage, parse


@pytest.mark.parametrize("message", [
    {"type": "open", "entry": "minirts-ai"},
    {"type": "control", "action": "step"},
    {"type": "speed", "fps": 60},
    {"type": "command", "action": 5},
    {"type": "go_move", "row": 0, "col": 18},
    {"type": "go_pass"},
])
def test_a_valid_message_comes_back_as_sent(message):
    assert parse(json.dumps(message)) == message


@pytest.mark.parametrize("text, why", [
    ("not json", "not JSON"),
    ("[1, 2]", "JSON object"),
    ('{"type": "shell", "cmd": "rm"}', "unknown message type"),
    ('{"entry": "x"}', "unknown message type"),
    ('{"type": "open"}', "takes the fields"),
    ('{"type": "open", "entry": "x", "path": "/etc/passwd"}', "takes the fields"),
    ('{"type": "open", "entry": ""}', "field 'entry'"),
    ('{"type": "open", "entry": "' + "x" * 65 + '"}', "field 'entry'"),
    ('{"type": "open", "entry": "a\\nb"}', "field 'entry'"),
    ('{"type": "speed", "fps": 0}', "field 'fps'"),
    ('{"type": "speed", "fps": 30.0}', "field 'fps'"),
    ('{"type": "speed", "fps": true}', "field 'fps'"),
    ('{"type": "go_move", "row": 19, "col": 0}', "field 'row'"),
    ('{"type": "control", "action": "explode"}', "field 'action'"),
    ("[" * 100_000, "bytes"),
    ('{"type": "go_pass", "pad": "' + "x" * MAX_MESSAGE_BYTES + '"}', "bytes"),
    (b"\xff\xfe", "not JSON"),
])
def test_a_bad_message_is_refused_saying_why(text, why):
    with pytest.raises(BadMessage, match=why):
        parse(text)


def random_value(rng: random.Random, depth: int = 0):
    kinds = ["int", "float", "str", "bool", "none"] + (["list", "dict"] if depth < 3 else [])
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.choice([0, 1, -1, 18, 19, 60, 61, 2**70, rng.randint(-1000, 1000)])
    if kind == "float":
        return rng.choice([0.5, float("nan"), 1e308, -0.0])
    if kind == "str":
        return rng.choice(["", "open", "minirts-ai", "../../etc/passwd", "\u0000", "é" * 70, "step"])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind == "list":
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["type", "entry", "fps", "row", "col", "action", "x"]): random_value(rng, depth + 1)
            for _ in range(rng.randint(0, 4))}


def test_fuzzed_messages_either_pass_their_schema_or_raise_bad_message():
    rng = random.Random(62)
    accepted = 0
    for _ in range(5000):
        value = random_value(rng)
        if isinstance(value, dict) and rng.random() < 0.5:
            value["type"] = rng.choice(sorted(SCHEMAS))
        try:
            text = json.dumps(value)
        except ValueError:
            continue
        try:
            message = parse(text)
        except BadMessage:
            continue
        accepted += 1
        schema = SCHEMAS[message["type"]]
        assert set(message) == {"type", *schema}
        assert all(rule.check(message[name]) for name, rule in schema.items())
    assert accepted > 0  # the fuzzer reaches valid messages too, so the check above ran
